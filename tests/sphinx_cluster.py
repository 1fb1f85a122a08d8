"""Real Sphinx daemons on loopback for tests and benchmarks: N real-time shards and one
distributed front over them, each `searchd` with its own config file, on free ports.

    cluster = SphinxCluster(folder, shards=2).start()
    cluster.front      # sphinx:127.0.0.1:PORT/front, what the tool searches
    cluster.shards     # the shards' targets, what `deltaseek index --to` loads
    cluster.stop_shard(1); cluster.stop()

The shard config is the one the README shows. Stopwords are bm25s's English list, the one the
in-process index drops, so both rank the same terms.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

import bm25s.stopwords

from deltaseek.programs.tools.sphinx import SphinxTarget

SEARCHD = shutil.which("searchd")

SHARD_CONFIG = """\
index shard
{{
    type = rt
    path = {folder}/data
    rt_field = title
    rt_field = text
    rt_attr_string = passage_id
    rt_attr_string = doc_title
    rt_attr_string = doc_text
    rt_attr_string = url
    rt_mem_limit = 256M
    min_word_len = 2
    charset_table = 0..9, A..Z->a..z, _, a..z, U+C0..U+D6->U+E0..U+F6, U+D8..U+DE->U+F8..U+FE, U+DF..U+F6, U+F8..U+FF
    stopwords = {stopwords}
}}
"""

FRONT_CONFIG = """\
index front
{{
{agents}
    agent_connect_timeout = 300
    agent_query_timeout = 5000
    type = distributed
}}
"""

SEARCHD_CONFIG = """
searchd
{{
{listen}
    log = {folder}/searchd.log
    query_log = {folder}/query.log
    pid_file = {folder}/searchd.pid
    binlog_path =
    workers = threads
}}
"""
"""The daemon's own block: a shard listens on both protocols, the front on SphinxQL alone."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def searchd_version() -> str:
    out = subprocess.run([SEARCHD, "--help"], capture_output=True, text=True).stdout
    return out.splitlines()[0].strip() if out else "unknown"


class Daemon:
    """One searchd in the foreground (--nodetach), so the test owns its process."""

    def __init__(self, folder: Path, config: str, sql_port: int, api_port: int | None = None):
        self.folder, self.sql_port, self.api_port = folder, sql_port, api_port
        folder.mkdir(parents=True, exist_ok=True)
        self.config = folder / "sphinx.conf"
        self.config.write_text(config)
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = 15.0) -> "Daemon":
        self.process = subprocess.Popen([SEARCHD, "--config", str(self.config), "--nodetach"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                log = (self.folder / "searchd.log")
                raise RuntimeError(f"searchd exited at start: {log.read_text()[-800:] if log.exists() else ''}")
            try:
                socket.create_connection(("127.0.0.1", self.sql_port), timeout=0.2).close()
                return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"searchd with {self.config} did not listen on {self.sql_port} in {timeout} s")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None


class SphinxCluster:
    def __init__(self, folder: Path, shards: int = 2):
        folder.mkdir(parents=True, exist_ok=True)
        stopwords = folder / "stopwords.txt"
        stopwords.write_text("\n".join(sorted(bm25s.stopwords.STOPWORDS_EN)) + "\n")
        self.shard_daemons: list[Daemon] = []
        agents = []
        for n in range(shards):
            api_port, sql_port = free_port(), free_port()
            shard_folder = folder / f"shard{n}"
            listen = f"    listen = 127.0.0.1:{api_port}\n    listen = 127.0.0.1:{sql_port}:mysql41"
            config = (SHARD_CONFIG.format(folder=shard_folder, stopwords=stopwords)
                      + SEARCHD_CONFIG.format(listen=listen, folder=shard_folder))
            self.shard_daemons.append(Daemon(folder / f"shard{n}", config, sql_port, api_port))
            agents.append(f"    agent = 127.0.0.1:{api_port}:shard")
        front_port = free_port()
        config = (FRONT_CONFIG.format(agents="\n".join(agents))
                  + SEARCHD_CONFIG.format(listen=f"    listen = 127.0.0.1:{front_port}:mysql41", folder=folder / "front"))
        self.front_daemon = Daemon(folder / "front", config, front_port)

    @property
    def shards(self) -> list[SphinxTarget]:
        return [SphinxTarget("127.0.0.1", d.sql_port, "shard") for d in self.shard_daemons]

    @property
    def front(self) -> SphinxTarget:
        return SphinxTarget("127.0.0.1", self.front_daemon.sql_port, "front")

    def start(self) -> "SphinxCluster":
        for daemon in [*self.shard_daemons, self.front_daemon]:
            daemon.start()
        return self

    def stop_shard(self, n: int) -> None:
        self.shard_daemons[n].stop()

    def start_shard(self, n: int) -> None:
        self.shard_daemons[n].start()

    def stop(self) -> None:
        for daemon in [self.front_daemon, *self.shard_daemons]:
            daemon.stop()
