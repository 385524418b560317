"""pick_unused_port for JAX's multi-process test harness (jax._src.test_multiprocess), which
falls back to fixed ports (9876...) when the portpicker package is absent; fixed ports collide
when several jobs run on one machine."""
import socket


def pick_unused_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
