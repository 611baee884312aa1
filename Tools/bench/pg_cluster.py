"""A throwaway PostgreSQL cluster for the benchmarks (as the postgres user when run as root)."""
import glob
import os
import shutil
import subprocess

from bench_support import TICKS, cpu_seconds


class Cluster:
    def __init__(self, directory, options=""):
        self.bin = sorted(glob.glob("/usr/lib/postgresql/*/bin"))[-1]
        self.dir = directory
        self.port = 20000 + os.getpid() % 20000
        self.as_pg = ["runuser", "-u", "postgres", "--"] if os.getuid() == 0 else []
        if os.getuid() == 0:
            shutil.chown(directory, "postgres")
        subprocess.run(self.as_pg + [f"{self.bin}/initdb", "-D", f"{directory}/data", "-A", "trust", "-U", "tandem",
                                     "--no-sync", "-E", "UTF8"], check=True, stdout=subprocess.DEVNULL)
        subprocess.run(self.as_pg + [f"{self.bin}/pg_ctl", "-D", f"{directory}/data", "-l", f"{directory}/log", "-w", "-o",
                                     f"-k {directory} -p {self.port} -c listen_addresses='' -c fsync=off {options}", "start"],
                       check=True, stdout=subprocess.DEVNULL)

    def url(self, db="postgres"):
        return f"postgresql://tandem@/{db}?host={self.dir}&port={self.port}"

    def psql(self, sql, db="postgres"):
        return subprocess.run([f"{self.bin}/psql", "-qAt", "-v", "ON_ERROR_STOP=1", "-d", self.url(db), "-c", sql],
                              check=True, capture_output=True, text=True).stdout.strip()

    def tandem_backend(self, tandem, db, schema):
        """Creates database `db` and sets it up as a Tandem backend for the schema file `schema`
        (`tandem backend setup`, as its administrator); returns its URL."""
        self.psql(f"CREATE DATABASE {db}")
        subprocess.run([tandem, "backend", "setup", self.url(db), "--schema", schema], check=True, stdout=subprocess.DEVNULL)
        return self.url(db)

    def session(self, db):
        """A psql session kept open, fed through its standard input."""
        return subprocess.Popen([f"{self.bin}/psql", "-qAt", "-d", self.url(db)], stdin=subprocess.PIPE,
                                stdout=subprocess.DEVNULL, text=True)

    def cpu_seconds(self):
        """User plus system CPU seconds of the whole server so far: the postmaster (with the
        processes it has reaped) and its live processes."""
        pid = int(open(f"{self.dir}/data/postmaster.pid").readline())
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        total = sum(int(f) for f in fields[11:15]) / TICKS  # its own time and its reaped children's
        for stat in glob.glob("/proc/[0-9]*/stat"):
            try:
                parent = int(open(stat).read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if parent == pid:
                total += cpu_seconds(int(stat.split("/")[2])) or 0
        return total

    def stop(self):
        subprocess.run(self.as_pg + [f"{self.bin}/pg_ctl", "-D", f"{self.dir}/data", "-m", "immediate", "stop"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
