package bfcl

import "github.com/feedrun/feedrun/internal/models"

// Version is the bfcl-eval release whose data and backend classes the
// environment reads; its wheel is Wheel.
const Version = "2026.3.23"

// Wheel is the bfcl-eval wheel (Berkeley Function Calling Leaderboard,
// Apache-2.0) as the Python package registry publishes it. Nothing of it is
// installed: the environment reads the benchmark's JSON files and the
// backend classes' sources straight out of the zip.
var Wheel = models.Dataset{
	Name:   "bfcl",
	File:   "bfcl_eval-" + Version + "-py3-none-any.whl",
	URL:    "https://files.pythonhosted.org/packages/ba/41/ed458527c770c50225b60bae3b0c3444b26804ee455fa2d8f187018d2cb2/bfcl_eval-2026.3.23-py3-none-any.whl",
	Size:   1925664,
	SHA256: "3bb6dfa5f0c68ad403c9ec50b00db2bb3b4cc9b38ab1ff33f48fe30d853d3a0a",
	Note:   "bfcl-eval " + Version + ", BFCL's multi-turn benchmark and backend classes (Apache-2.0)",
}

// Mpmath is the mpmath wheel at the version bfcl-eval pins (1.3.0, BSD),
// which the math class imports. The worker loads it from the zip as it
// loads BFCL's classes, so that the sandbox's interpreter needs no package
// of its own and every machine computes with the same mpmath.
var Mpmath = models.Dataset{
	Name:   "bfcl-mpmath",
	File:   "mpmath-1.3.0-py3-none-any.whl",
	URL:    "https://files.pythonhosted.org/packages/43/e3/7d92a15f894aa0c9c4b49b8ee9ac9850d6e63b03c9c32c0367a13ae62209/mpmath-1.3.0-py3-none-any.whl",
	Size:   536198,
	SHA256: "a0b2b9fe80bbcd81a6647ff13108738cfb482d481d826cc0e02f5b35e5c88d2c",
	Note:   "mpmath 1.3.0, which BFCL's math class imports (BSD)",
}

// Datasets are what the environment reads, for `feedrun data pull`.
var Datasets = []models.Dataset{Wheel, Mpmath}
