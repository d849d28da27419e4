"""Type stubs of the native module (src/lib.rs): the calls reduce_rs/__init__.py makes."""

def reduce_cuda(
    op: str,
    dtype: str,
    layout: str,
    input: int,
    length: int,
    output: int,
    device: int,
    stream: int,
    rows: int = 0,
    cols: int = 0,
    offsets: int = 0,
    segments: int = 0,
    reproducible: bool = False,
) -> None:
    """Enqueues ``op`` over ``length`` elements of ``dtype`` at device address ``input``
    (``layout``: "whole", "rows", "columns" or "segments") on ``stream`` of ``device``,
    writing the results to device address ``output``; nothing waits for the GPU."""

def reduce_host(
    op: str,
    dtype: str,
    layout: str,
    input: int,
    length: int,
    values: int,
    indices: int = 0,
    rows: int = 0,
    cols: int = 0,
    offsets: int = 0,
    segments: int = 0,
    reproducible: bool = False,
) -> None:
    """Reduces host memory at ``input`` on GPU 0 or the simulator; writes each result's value
    to ``values`` and, for argmin/argmax, its index to ``indices`` (host addresses)."""

def host_backend() -> str:
    """``"GPU 0: <name>"`` or ``"simulator"``."""

def cuda_device_count() -> int:
    """CUDA devices the driver sees (0 without a driver)."""

def device_of_pointer(ptr: int) -> int:
    """The CUDA ordinal of the device holding device address ``ptr``."""
