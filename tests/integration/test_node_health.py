"""Health from discovery: a GPU that disappears from the PCI bus makes its
node DEGRADED; the job running there is restarted elsewhere, the node is
drained with the reason and takes no new work.

The agent describes a real 4xH100 server from its hwloc XML and looks its
GPUs up in a fake sysfs tree (--sysfs-root), so the test can pull a GPU."""
import os

from gantry_cluster import (H100_XML, ClusterTestCase, GantryCluster,
                            h100_node_with_fake_sysfs, main, pull_gpu,
                            wait_for)

class NodeHealthTest(ClusterTestCase):

    def test_lost_gpu_degrades_the_node_and_moves_the_job(self):
        if not os.path.exists(H100_XML):
            self.skipTest(f"shared data not found at {H100_XML}")
        cluster = GantryCluster(agents=2, label=self.id())
        self._clusters.append(cluster)
        self.addCleanup(cluster.stop_processes)
        sysfs = {name: h100_node_with_fake_sysfs(cluster, name)
                 for name in ("node01", "node02")}
        cluster.start()
        self.assertEqual(len(cluster.nodes()["node01"]["gpus"]), 4)

        script = cluster.write_script("gpu.sh", "#!/bin/bash\n"
                                      "echo \"$GANTRY_ATTEMPT $SLURMD_NODENAME $CUDA_VISIBLE_DEVICES\"\n"
                                      "sleep 300\n")
        job_id = cluster.submit(script, "--gpus-per-node=4")
        job = cluster.wait_job(job_id, "RUNNING")
        first = job["nodelist"]
        pull_gpu(sysfs[first], 2)

        wait_for(lambda: cluster.nodes()[first]["health_problems"], 10,
                 f"{first} to report the lost GPU")
        node = cluster.nodes()[first]
        self.assertEqual(node["health_problems"], ["GPU 2 (0000:cb:00.0) is gone"])
        self.assertTrue(node["drained"])
        self.assertIn("+degraded", cluster.cli("nodes", "-N").stdout)
        wait_for(lambda: len(cluster.job(job_id)["attempts"]) == 2, 10,
                 "the job to restart")
        job = cluster.wait_job(job_id, "RUNNING")
        self.assertNotEqual(job["nodelist"], first)
        self.assertTrue(job["attempts"][0]["node_fault"])
        self.assertIn("degraded", job["attempts"][0]["end_detail"])
        cluster.cli("cancel", str(job_id))


if __name__ == "__main__":
    main()
