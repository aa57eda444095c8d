#!/bin/bash
# Gantry's main job on one machine: installs what is missing, builds the
# daemons and the CLI (packaging/build.sh, the build test.sh shares), starts
# a private munged, gantryd and 4 agents on loopback in a temp dir, submits the example
# 2-node all-reduce, shows the queue and cluster status while it runs, prints
# the job's output and record, and stops everything it started.
# Plain TCP on loopback by default; GANTRY_DEMO_TLS=1 makes a CA and a
# certificate with openssl and runs gantryd's TCP port with TLS (docs/admin-guide.md,
# "TLS on the TCP port").
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/packaging/install-deps.sh"
# Only what the demo runs; test.sh builds the rest on the same configuration.
"$root/packaging/build.sh" gantryd gantry-agent gantry
build="${GANTRY_BUILD_DIR:-$root/build}"
gantryd="$build/daemon/gantryd"
agent="$build/agent/gantry-agent"
gantry="$build/cli/gantry"

demo="$(mktemp -d /tmp/gantry-demo.XXXXXX)"
pids=()
cleanup() {
  # Stop by PID, agents first (they stop their ranks), then the controller,
  # then munged.
  for (( i=${#pids[@]}-1; i>=0; i-- )); do kill "${pids[$i]}" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  echo "demo: stopped everything; logs kept in $demo"
}
trap cleanup EXIT

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "starting a private munged (authentication, as in Slurm; key in $demo/munge)"
# A cluster shares one MUNGE key; this one-machine cluster makes its own so
# that it needs no system setup. CLI and jobs find it through
# GANTRY_MUNGE_SOCKET.
mkdir -p "$demo/munge"
chmod 755 "$demo" "$demo/munge"
dd if=/dev/urandom of="$demo/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$demo/munge/munge.key"
export GANTRY_MUNGE_SOCKET="$demo/munge/munge.sock"
/usr/sbin/munged --foreground --socket="$GANTRY_MUNGE_SOCKET" --key-file="$demo/munge/munge.key" \
  --pid-file="$demo/munge/munged.pid" --log-file="$demo/munge/munged.log" \
  --seed-file="$demo/munge/munged.seed" 2> "$demo/munged.log" &
pids+=($!)
for _ in $(seq 100); do [ -S "$GANTRY_MUNGE_SOCKET" ] && break; sleep 0.05; done

tls_server=() tls_agent=()
if [ "${GANTRY_DEMO_TLS:-0}" = 1 ]; then
  step "making a CA and a certificate for 127.0.0.1 (TLS on gantryd's TCP port)"
  mkdir -p "$demo/tls"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$demo/tls/ca.key" -out "$demo/tls/ca.pem" -days 1 -subj "/CN=Gantry demo CA" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign 2> /dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$demo/tls/gantryd.key" -out "$demo/tls/gantryd.csr" -subj "/CN=gantryd" 2> /dev/null
  openssl x509 -req -in "$demo/tls/gantryd.csr" -CA "$demo/tls/ca.pem" -CAkey "$demo/tls/ca.key" \
    -CAcreateserial -out "$demo/tls/gantryd.pem" -days 1 \
    -extfile <(echo "subjectAltName=IP:127.0.0.1") 2> /dev/null
  tls_server=(--tls-cert "$demo/tls/gantryd.pem" --tls-key "$demo/tls/gantryd.key")
  tls_agent=(--tls-ca "$demo/tls/ca.pem")
  export GANTRY_TLS_CA="$demo/tls/ca.pem"  # for gantry --controller 127.0.0.1:PORT
fi

step "starting gantryd (state in $demo/state)"
"$gantryd" --state-dir "$demo/state" --listen 127.0.0.1:0 --socket "$demo/gantryd.sock" \
  --munge-socket "$GANTRY_MUNGE_SOCKET" "${tls_server[@]}" \
  --heartbeat-interval 0.5 --node-timeout 5 2> "$demo/gantryd.log" &
pids+=($!)
port=""
for _ in $(seq 100); do
  port="$(grep 'msg="gantryd ready"' "$demo/gantryd.log" | grep -o ' listen=[0-9.]*:[0-9]*' | sed 's/.*://' || true)"
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || { cat "$demo/gantryd.log"; echo "demo: gantryd did not start"; exit 1; }
export GANTRY_CONTROLLER="unix:$demo/gantryd.sock"
echo "gantryd listening on 127.0.0.1:$port and $GANTRY_CONTROLLER"

step "starting 4 agents: node01..node04 at 127.0.0.1..127.0.0.4"
for i in 1 2 3 4; do
  "$agent" --controller "127.0.0.1:$port" --node-name "node0$i" --address "127.0.0.$i" \
    --work-dir "$demo/agent$i" --munge-socket "$GANTRY_MUNGE_SOCKET" "${tls_agent[@]}" \
    2> "$demo/agent$i.log" &
  pids+=($!)
done
for _ in $(seq 100); do
  up="$("$gantry" nodes | grep -c ' up ' || true)"
  [ "$up" -ge 4 ] && break
  sleep 0.1
done
"$gantry" nodes

step "submitting packaging/examples/allreduce.sbatch (2 nodes x 2 tasks)"
# The job inherits this environment (as with sbatch): put Debian's python3,
# which has python3-torch, first, and the Slurm command names (srun,
# scontrol: links to gantry, as gantry-slurm-compat installs them) before it.
mkdir -p "$demo/bin"
for name in sbatch srun salloc sattach squeue scancel sinfo scontrol sacct sstat sreport sprio sshare sdiag; do ln -sf "$gantry" "$demo/bin/$name"; done
export PATH="$demo/bin:/usr/bin:$PATH"
cp "$root/packaging/examples/allreduce.sbatch" "$root/packaging/examples/allreduce.py" "$demo/"
cd "$demo"
cat allreduce.sbatch
job="$("$gantry" batch --parsable allreduce.sbatch)"
echo "Submitted batch job $job"

step "while it runs: gantry queue and gantry status"
sleep 1
"$gantry" queue
"$gantry" status

state=""
for _ in $(seq 600); do
  state="$("$gantry" job "$job" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')"
  case "$state" in PENDING|RUNNING) sleep 0.2 ;; *) break ;; esac
done

step "job $job ended $state: its output (allreduce-$job.out)"
cat "allreduce-$job.out"

step "gantry job $job"
"$gantry" job "$job"
[ "$state" = COMPLETED ]
