"""What the benchmark scripts share: the release build, clocks, percentiles, process accounting."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TICKS = os.sysconf("SC_CLK_TCK")


def now_us():
    """Microseconds on CLOCK_MONOTONIC (the clock `tandem` stamps its output with)."""
    import time
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000


def percentile(values, p):
    """Nearest rank, as `tandem stress` computes it; NaN for no values."""
    values = sorted(values)
    return values[min(len(values) - 1, max(0, int(round(p / 100 * len(values) + 0.5)) - 1))] if values else float("nan")


def write_schema(directory, schema):
    """Writes the schema `schema` (a dict) as `directory`/schema.json; returns its path."""
    import json
    path = os.path.join(directory, "schema.json")
    with open(path, "w") as f:
        json.dump(schema, f)
    return path


# The release build as a host runs it (README.md, "To install"): the Swift runtime and Foundation
# linked in, so that each `tandem` process starts without loading them.
RELEASE_BUILD = ["swift", "build", "-c", "release", "--static-swift-stdlib"]


def release_build(products=("tandem",), stdout=sys.stderr, root=ROOT):
    """Builds `products` of the release build of the tree at `root` (all of them when empty);
    returns its bin path."""
    # One build per product: SwiftPM builds only the last of several --product options.
    for product in products:
        subprocess.run(RELEASE_BUILD + ["--product", product], cwd=root, check=True, stdout=stdout)
    if not products:
        subprocess.run(RELEASE_BUILD, cwd=root, check=True, stdout=stdout)
    return subprocess.run(RELEASE_BUILD + ["--show-bin-path"], cwd=root, check=True, capture_output=True, text=True).stdout.strip()


def build_tandem(progress, given=None):
    """Builds the release `tandem` (its output to stderr) and returns its path; or returns
    `given`, a built `tandem` to time instead (another release's, for a side-by-side comparison)."""
    if given:
        return os.path.abspath(given)
    progress("building the release tandem")
    return os.path.join(release_build(), "tandem")


def stop_all(processes, timeout=20):
    """SIGTERM to every process still running, then waits, killing those that do not end."""
    for process in processes:
        if process.poll() is None:
            process.terminate()
    for process in processes:
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def cpu_seconds(pid):
    """User plus system CPU seconds of a process so far, or None when it is gone."""
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS
    except (OSError, IndexError):
        return None


def rss_mb(pid):
    """A process's resident memory in MB, or None when it is gone."""
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None
