#!/usr/bin/env bash
# make test-slurm: the Slurm scale-out of docs/cluster.md, end to end, on a
# throwaway one-node cluster.
#
# As root it installs Debian's slurmctld, slurmd, slurm-client and munge
# packages when they are absent, then runs munged, slurmctld and slurmd from
# a temporary folder: their own slurm.conf (through SLURM_CONF), munge key and
# socket, state, spool, logs and ports. No system-wide Slurm or MUNGE
# configuration is read or changed, and a trap stops every daemon it started,
# by pid, and every job process of its cluster, whether the test passes or
# not.
#
# It probes 8 ToolShed items x 3 harnesses on smollm2-135m twice, each as a
# 4-task array plus the dependent merge job, both through
# scripts/slurm/submit.sh:
#   clean    the array succeeds, the merge job runs and writes the report;
#   failure  shard 2 is killed (SIGKILL) mid-run, the merge job is cancelled
#            by its failed dependency, `submit.sh --only 2` resubmits that
#            shard alone, it resumes its folder, and the new merge job runs.
# Both merged probe_items.csv must hold exactly the rows of a single-process
# run of the same items (compared after sorting; the table has no timing
# columns, so every field must match).
#
# Environment: FEEDRUN_BIN (default bin/feedrun), TEST_SLURM_TIMEOUT (seconds
# for the whole test, default 900), KEEP_SLURM_TEST=1 keeps the temporary
# folder.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
feedrun=${FEEDRUN_BIN:-$root/bin/feedrun}
export FEEDRUN_BIN=$feedrun # what submit.sh and the jobs run
deadline=$((SECONDS + ${TEST_SLURM_TIMEOUT:-900}))
model=smollm2-135m
probe_flags=(--items 8 --harness "verbatim,abstract,drop" --threads 1)

log() { printf 'test-slurm: %s\n' "$*" >&2; }
fail() {
	log "FAIL: $*"
	exit 1
}

[ "$(id -u)" -eq 0 ] || fail "needs root: it installs Debian's slurm and munge packages when absent and runs slurmd"
[ -x "$feedrun" ] || fail "no feedrun binary at $feedrun (run make build)"

tmp='' policy_rc='' daemons=() children=()

cleanup() {
	local status=$? pid p i jobs
	set +e
	trap - EXIT INT TERM
	if [ -n "${SLURM_CONF:-}" ] && [ ${#daemons[@]} -gt 0 ]; then
		# Jobs first, while slurmd can still end their processes.
		mapfile -t jobs < <(squeue -h -o %A 2>/dev/null)
		[ ${#jobs[@]} -gt 0 ] && scancel "${jobs[@]}" 2>/dev/null
		for ((i = 0; i < 30; i++)); do
			[ -z "$(squeue -h 2>/dev/null)" ] && break
			sleep 1
		done
	fi
	for pid in "${children[@]}"; do kill -KILL "$pid" 2>/dev/null; done
	# slurmd, slurmctld, munged, in the reverse of their start.
	for ((i = ${#daemons[@]} - 1; i >= 0; i--)); do
		pid=${daemons[i]}
		kill -TERM "$pid" 2>/dev/null || continue
		for ((p = 0; p < 50; p++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.2
		done
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	# Anything of this cluster still alive: slurmstepd and job processes
	# carry its slurm.conf in their environment (the daemons pass theirs on,
	# sbatch --export=ALL passes this script's on, with a SLURM_JOB_ID).
	if [ -n "$tmp" ]; then
		for p in /proc/[0-9]*; do
			pid=${p#/proc/}
			[ "$pid" = $$ ] && continue
			if { tr '\0' '\n' <"$p/environ"; } 2>/dev/null | grep -qx "FEEDRUN_SLURM_TEST=$tmp"; then
				log "stopping leftover process $pid: $(tr '\0' ' ' <"$p/cmdline" 2>/dev/null)"
				kill -KILL "$pid" 2>/dev/null
			fi
		done
	fi
	if [ "$status" -ne 0 ] && [ -n "$tmp" ]; then
		for f in "$tmp"/slurmctld.log "$tmp"/slurmd.log "$tmp"/munge/munged.log "$tmp"/ref.log "$tmp"/*/logs/*.out; do
			[ -s "$f" ] && { log "--- last lines of $f"; tail -n 15 "$f" >&2; }
		done
	fi
	[ -n "$policy_rc" ] && rm -f /usr/sbin/policy-rc.d
	if [ -n "$tmp" ]; then
		if [ "${KEEP_SLURM_TEST:-}" = 1 ]; then log "kept $tmp"; else rm -rf "$tmp"; fi
	fi
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- packages ---------------------------------------------------------------
missing=()
for tool in slurmctld:slurmctld slurmd:slurmd sbatch:slurm-client munged:munge; do
	command -v "${tool%%:*}" >/dev/null || missing+=("${tool#*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
	log "installing ${missing[*]}"
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		# Keep the packages from starting their system-wide daemons.
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
		chmod 755 /usr/sbin/policy-rc.d
		policy_rc=1
	fi
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# --- a one-node cluster in a temporary folder -------------------------------
tmp=$(mktemp -d /tmp/feedrun-slurm.XXXXXX)
chmod 755 "$tmp"
mkdir -p "$tmp/state" "$tmp/spool"
mkdir -m 700 "$tmp/munge"
export FEEDRUN_SLURM_TEST=$tmp # marks every process of this cluster for cleanup

remaining() { echo $((deadline - SECONDS)); }

# wait_for DESCRIPTION COMMAND...: poll until COMMAND succeeds, within the
# test's deadline.
wait_for() {
	local what=$1
	shift
	until "$@"; do
		[ "$(remaining)" -gt 0 ] || fail "timed out waiting for $what"
		sleep 0.5
	done
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
ctld_port=$((20000 + RANDOM % 20000))
while ! port_free "$ctld_port" || ! port_free $((ctld_port + 1)); do ctld_port=$((20000 + RANDOM % 20000)); done

sock=$tmp/munge/munge.socket
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$tmp/munge/munge.key"
munged --foreground --force --socket="$sock" --key-file="$tmp/munge/munge.key" \
	--pid-file="$tmp/munge/munged.pid" --log-file="$tmp/munge/munged.log" \
	--seed-file="$tmp/munge/munged.seed" >"$tmp/munge/munged.out" 2>&1 &
daemons+=($!)
munge_works() { munge -n -S "$sock" 2>/dev/null | unmunge -S "$sock" >/dev/null 2>&1; }
wait_for "munged" munge_works

node=$(hostname -s)
cpus=$(nproc)
mem_mb=$(($(sed -n 's/^MemTotal: *\([0-9]*\) kB/\1/p' /proc/meminfo) / 2048))
: >"$tmp/plugstack.conf"
cat >"$tmp/slurm.conf" <<EOF
ClusterName=feedrun-test
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$((ctld_port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
PlugStackConfig=$tmp/plugstack.conf
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MinJobAge=600
KillWait=5
InactiveLimit=0
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$tmp/slurm.conf

slurmctld -D -c -f "$SLURM_CONF" >"$tmp/slurmctld.out" 2>&1 &
daemons+=($!)
slurmd -D -N "$node" -f "$SLURM_CONF" >"$tmp/slurmd.out" 2>&1 &
daemons+=($!)
node_idle() { [ "$(sinfo -h -n "$node" -o %t 2>/dev/null)" = idle ]; }
wait_for "the node to be idle (sinfo)" node_idle
log "cluster up: node $node, $cpus CPUs, slurmctld port $ctld_port, in $tmp"

# --- the runs ---------------------------------------------------------------
# The single-process reference, alongside the arrays.
"$feedrun" probe --model "$model" --env toolshed "${probe_flags[@]}" --out "$tmp/ref" >"$tmp/ref.log" 2>&1 &
ref_pid=$!
children+=("$ref_pid")

# submit OUT [submit.sh options]: a 4-shard probe; sets array_id and merge_id.
submit() {
	local out=$1 lines
	shift
	lines=$("$root/scripts/slurm/submit.sh" --out "$out" --cpus 1 --mem 1G --time 20 --report "--bootstrap 200" "$@" \
		probe "$model" toolshed 4 "${probe_flags[@]}")
	array_id=$(sed -n 's/^array \([0-9]*\)$/\1/p' <<<"$lines")
	merge_id=$(sed -n 's/^merge \([0-9]*\)$/\1/p' <<<"$lines")
	if [ -z "$array_id" ] || [ -z "$merge_id" ]; then fail "submit.sh printed no job ids: $lines"; fi
}

# state JOBID: the job's state, one ID=STATE word per array task.
state() { scontrol show job -o "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2 | sort | uniq -c | awk '{print $1 "x" $2}' | paste -sd' '; }
task_state() { scontrol show job -o "${1}_$2" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2; }
ended() { ! squeue -h -j "$1" -t PD,R,CG,CF,S 2>/dev/null | grep -q .; }

submit "$tmp/failure"
fail_array=$array_id fail_merge=$merge_id
submit "$tmp/clean"
clean_array=$array_id clean_merge=$merge_id
log "submitted: failure path array $fail_array + merge $fail_merge; clean array $clean_array + merge $clean_merge"

# records prints a CSV file's data records one a line (as JSON lists), so
# that they can be counted, sorted and compared: a field may hold newlines
# (the greedy replies), so lines of the file are not records.
records() { python3 -c 'import csv, json, sys
r = csv.reader(open(sys.argv[1], newline=""))
next(r, None)
for rec in r:
    print(json.dumps(rec))' "$1"; }
count() { records "$1" | wc -l; }

# Kill shard 2 of the failure path once its first item's rows are in.
shard2=$tmp/failure/shards/2-of-4
rows_in() { [ -f "$shard2/probe_items.csv" ] && [ "$(count "$shard2/probe_items.csv")" -ge 1 ]; }
wait_for "shard 2's first rows" rows_in
scancel --full --signal=KILL "${fail_array}_2"
killed_rows=$(count "$shard2/probe_items.csv")
log "killed shard 2 (job ${fail_array}_2) with $killed_rows of its 6 rows written"
wait_for "the failure-path array to end" ended "$fail_array"
wait_for "the failure-path merge job to be cancelled" ended "$fail_merge"
killed_state=$(task_state "$fail_array" 2)
[ "$killed_state" != COMPLETED ] || fail "shard 2 finished before it was killed; nothing was tested"
log "shard 2 ended $killed_state, and its merge job was cancelled"
[ "$(state "$fail_merge")" = "1xCANCELLED" ] || fail "the merge job after a failed task is $(state "$fail_merge"), want CANCELLED"
[ ! -e "$tmp/failure/manifest.json" ] || fail "a merge ran although shard 2 failed"
for k in 0 1 3; do
	[ "$(task_state "$fail_array" "$k")" = COMPLETED ] || fail "failure path shard $k is $(task_state "$fail_array" "$k")"
done

submit "$tmp/failure" --only 2
resub_array=$array_id fail_merge=$merge_id
log "resubmitted shard 2: array $resub_array + merge $fail_merge"

wait_for "the clean merge job" ended "$clean_merge"
wait_for "the failure-path merge job" ended "$fail_merge"
log "clean path: array $(state "$clean_array"), merge $(state "$clean_merge")"
log "failure path: resubmitted shard $(state "$resub_array"), merge $(state "$fail_merge")"
[ "$(state "$clean_array")" = "4xCOMPLETED" ] || fail "clean array is $(state "$clean_array")"
[ "$(state "$clean_merge")" = "1xCOMPLETED" ] || fail "clean merge job is $(state "$clean_merge")"
[ "$(state "$resub_array")" = "1xCOMPLETED" ] || fail "resubmitted shard is $(state "$resub_array")"
[ "$(state "$fail_merge")" = "1xCOMPLETED" ] || fail "failure-path merge job is $(state "$fail_merge")"
grep -q '"resumed"' "$shard2/manifest.json" || fail "the resubmitted shard 2 did not resume its folder"

wait "$ref_pid" || fail "the single-process run failed (see above)"
children=()

# --- the check --------------------------------------------------------------
rows() { records "$1" | LC_ALL=C sort; }
ref=$tmp/ref/probe_items.csv
want=$(count "$ref")
[ "$want" -eq 24 ] || fail "the single-process run wrote $want rows, want 8 items x 3 harnesses = 24"
for run in clean failure; do
	got=$tmp/$run/probe_items.csv
	[ -f "$got" ] || fail "$run: no merged $got"
	[ "$(head -n 1 "$got")" = "$(head -n 1 "$ref")" ] || fail "$run: merged header differs from the single-process run's"
	if ! diff <(rows "$ref") <(rows "$got") >"$tmp/$run.diff"; then
		head -n 20 "$tmp/$run.diff" >&2
		fail "$run: merged rows differ from the single-process run's"
	fi
	grep -q . "$tmp/$run/report.txt" || fail "$run: the merge job wrote no report"
	log "$run path: merged probe_items.csv holds exactly the $want rows of the single-process run"
done
log "ok in $((SECONDS))s"
