"""A real S3-protocol server for the shared cache tests: moto's ThreadedMotoServer on 127.0.0.1.

One server per test process (pytest-xdist worker), a fresh bucket per test.  Tests and
the cooks they start talk to it over HTTP through boto3, as they would to MinIO or AWS:
only the standard AWS environment points them at it (endpoint, dummy credentials, no
config files of the machine).
"""

from __future__ import annotations

import itertools
import logging
import os

_SERVER = None
_BUCKETS = itertools.count()


def server_url() -> str:
    """The endpoint of this process's server (started on first use, stopped at exit)."""
    global _SERVER
    if _SERVER is None:
        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no request log lines in test output
        srv = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        srv.start()
        _SERVER = srv
    host, port = _SERVER.get_host_and_port()
    return f"http://{host}:{port}"


def aws_env(endpoint: str) -> dict[str, str]:
    """The standard AWS environment that points boto3 at *endpoint* and nowhere else."""
    return {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "veduta-test",
        "AWS_SECRET_ACCESS_KEY": "veduta-test-secret",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        "AWS_EC2_METADATA_DISABLED": "true",
    }


def new_bucket(env: dict[str, str]) -> str:
    """Create a bucket no other test uses (the server's state is shared by the process)."""
    name = f"veduta-test-{os.getpid()}-{next(_BUCKETS)}"
    client(env).create_bucket(Bucket=name)
    return name


def client(env: dict[str, str]):
    import boto3

    return boto3.session.Session().client(
        "s3",
        endpoint_url=env["AWS_ENDPOINT_URL"],
        aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
        region_name=env["AWS_DEFAULT_REGION"],
    )
