package cli

// lanesFlagHelp is --lanes' help on probe and rollout.
const lanesFlagHelp = "run `N` worker processes: N > 1 runs N copies of this command, lane k on\n" +
	"--shard k/N with --threads/N threads (rounded down, at least 1; --threads 0\n" +
	"counts every core), each writing OUT/lanes/k-of-N, and merges them into OUT\n" +
	"at the end; 1: this process alone"

// lanesHelp ends probe's and rollout's long help.
const lanesHelp = `
--lanes N (N > 1) splits the run into N worker processes of this binary
on one machine: lane k runs this command with --shard k/N, --threads/N
threads and --out OUT/lanes/k-of-N, and once every lane has finished their
folders are merged into OUT as 'feedrun merge' would: the rows a single
process writes, sorted by each table's key columns rather than in the order
a single process appends them. Lanes write no progress bars; every line a
lane writes to stderr is prefixed "lane k/N: ". Ctrl-C or SIGTERM stops
every lane after its row in flight, as it stops one process, and so does the
failure of any lane (the command then exits with that lane's code and names
its folder). Running the same command again resumes every lane and merges
again; when OUT already holds the merge of those lanes, nothing is written.
--lanes cannot be combined with --shard: a cluster's shards each run one
process.`
