"""Health from discovery: a GPU that disappears from the PCI bus makes its
node DEGRADED; the job running there is restarted elsewhere, the node is
drained with the reason and takes no new work.

The agent describes a real 4xH100 server from its hwloc XML and looks its
GPUs up in a fake sysfs tree (--sysfs-root), so the test can pull a GPU."""
import os

from gantry_cluster import (ClusterTestCase, GantryCluster, main, shared_data,
                            wait_for)

H100_XML = shared_data("hwloc", "dell-xe8640-4xH100-ndr.flux-ipa20.v2.xml")
H100_GPUS = ["0000:4e:00.0", "0000:5f:00.0", "0000:cb:00.0", "0000:db:00.0"]


class NodeHealthTest(ClusterTestCase):

    def test_lost_gpu_degrades_the_node_and_moves_the_job(self):
        if not os.path.exists(H100_XML):
            self.skipTest(f"shared data not found at {H100_XML}")
        cluster = GantryCluster(agents=2, label=self.id())
        self._clusters.append(cluster)
        self.addCleanup(cluster.stop_processes)
        sysfs = {}
        for name in ("node01", "node02"):
            root = os.path.join(cluster.dir, f"sysfs-{name}")
            for bus_id in H100_GPUS:
                os.makedirs(os.path.join(root, "bus", "pci", "devices", bus_id))
            sysfs[name] = root
            cluster.agent_args[name] = ["--hwloc-xml", H100_XML, "--sysfs-root", root]
        cluster.start()
        self.assertEqual(len(cluster.nodes()["node01"]["gpus"]), 4)

        script = cluster.write_script("gpu.sh", "#!/bin/bash\n"
                                      "echo \"$GANTRY_ATTEMPT $SLURMD_NODENAME $CUDA_VISIBLE_DEVICES\"\n"
                                      "sleep 300\n")
        job_id = cluster.submit(script, "--gpus-per-node=4")
        job = cluster.wait_job(job_id, "RUNNING")
        first = job["nodelist"]
        os.rmdir(os.path.join(sysfs[first], "bus", "pci", "devices", H100_GPUS[2]))

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
