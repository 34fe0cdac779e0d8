"""
random kernels: ChaCha20 counter-based generator and bulk samplers
"""
from __future__ import annotations
import numpy
import numpy.typing
import typing
__all__: list[str] = ['BitGen', 'CHUNK', 'CHUNK_BLOCKS', 'Generator', 'arsinh_normal', 'chacha20_block', 'chacha_best_impl', 'chacha_impls', 'det_exp', 'det_log', 'exponential', 'gamma', 'laplace', 'logistic', 'normal', 'sphere', 'subbotin', 'uniform', 'ziggurat_closure']
class Generator:
    """
    ChaCha20 counter-based generator from a 32-byte key and a 64-bit stream id (see csrc/include/pydp/random/generator.hpp). Not thread-safe; copies are cheap.
    """
    def __init__(self, key: bytes, stream: typing.SupportsInt | typing.SupportsIndex = 0, impl: str = 'auto', secure: bool = False) -> None:
        ...
    def chunk(self, c: typing.SupportsInt | typing.SupportsIndex) -> Generator:
        ...
    def copy(self) -> Generator:
        ...
    def direction(self, d: typing.SupportsInt | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.float64]:
        """
        one uniform direction on S^{d-1} from the sequential stream
        """
    def ensure_owner(self) -> None:
        """
        re-key from OS entropy if this secure generator was copied into another process (fork)
        """
    def exponential(self) -> float:
        ...
    def next_u64(self) -> int:
        ...
    def normal(self) -> float:
        ...
    def random_raw(self, n: typing.SupportsInt | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.uint64]:
        """
        the next n 64-bit words of the stream (sequential, one thread)
        """
    def reserve_chunks(self, k: typing.SupportsInt | typing.SupportsIndex) -> int:
        ...
    def spawn(self, i: typing.SupportsInt | typing.SupportsIndex) -> Generator:
        ...
    def uniform(self) -> float:
        ...
    def uniform_open(self) -> float:
        ...
    @property
    def block_counter(self) -> int:
        ...
    @property
    def key(self) -> bytes:
        ...
    @property
    def secure(self) -> bool:
        ...
    @property
    def stream(self) -> int:
        ...
class BitGen:
    """
    numpy's bitgen_t over a ChaCha20 Generator (csrc/include/pydp/random/bitgen.hpp); pydp_core's ChaCha20 BitGenerator holds one. Not thread-safe: hold the lock.
    """
    def __init__(self, key: bytes, stream: typing.SupportsInt | typing.SupportsIndex = 0) -> None:
        ...
    def capsule(self) -> typing.Any:
        """
        a new PyCapsule 'BitGenerator' pointing at the bitgen_t (keeps this object alive)
        """
    def get_state(self) -> tuple[bytes, int, int, int, bool, int]:
        """
        (key, stream, block, word, has_uint32, uinteger)
        """
    def random_raw(self, n: typing.SupportsInt | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.uint64]:
        """
        the next n 64-bit words (the caller holds the lock)
        """
    def set_state(self, key: bytes, stream: typing.SupportsInt | typing.SupportsIndex, block: typing.SupportsInt | typing.SupportsIndex, word: typing.SupportsInt | typing.SupportsIndex, has_uint32: bool, uinteger: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def spawn_key(self, i: typing.SupportsInt | typing.SupportsIndex) -> bytes:
        """
        the key of stream i (Generator::spawn), whose stream id is 0
        """
    @property
    def address(self) -> int:
        """
        the address of the bitgen_t (for ctypes)
        """
def arsinh_normal(gen: Generator, out: numpy.ndarray, A: typing.SupportsFloat | typing.SupportsIndex, sigma: typing.SupportsFloat | typing.SupportsIndex, loc: typing.SupportsFloat | typing.SupportsIndex, threads: typing.SupportsInt | typing.SupportsIndex) -> None:
    ...
def chacha20_block(key: bytes, counter: typing.SupportsInt | typing.SupportsIndex, nonce: typing.SupportsInt | typing.SupportsIndex, nblocks: typing.SupportsInt | typing.SupportsIndex = 1, impl: str = 'auto') -> bytes:
    """
    keystream bytes of nblocks ChaCha20 blocks (64-bit counter in state words 12-13, 64-bit nonce in 14-15)
    """
def chacha_best_impl() -> str:
    ...
def chacha_impls() -> list[str]:
    ...
def det_exp(x: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
    """
    the sampler's own exp (Subbotin path), for accuracy tests; |x| <= 700
    """
def det_log(x: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
    """
    the sampler's own log (Subbotin path), for accuracy tests; finite normal x > 0 only
    """
def exponential(gen: Generator, out: numpy.ndarray, scale: typing.SupportsFloat | typing.SupportsIndex, threads: typing.SupportsInt | typing.SupportsIndex) -> None:
    ...
def gamma(gen: Generator, out: numpy.ndarray, shape: typing.SupportsFloat | typing.SupportsIndex, scale: typing.SupportsFloat | typing.SupportsIndex, threads: typing.SupportsInt | typing.SupportsIndex) -> None:
    ...
def laplace(gen: Generator, out: numpy.ndarray, loc: typing.SupportsFloat | typing.SupportsIndex, scale: typing.SupportsFloat | typing.SupportsIndex, threads: typing.SupportsInt | typing.SupportsIndex) -> None:
    ...
def logistic(gen: Generator, out: numpy.ndarray, loc: typing.SupportsFloat | typing.SupportsIndex, scale: typing.SupportsFloat | typing.SupportsIndex, threads: typing.SupportsInt | typing.SupportsIndex) -> None:
    ...
def normal(gen: Generator, out: numpy.ndarray, loc: typing.SupportsFloat | typing.SupportsIndex, scale: typing.SupportsFloat | typing.SupportsIndex, threads: typing.SupportsInt | typing.SupportsIndex) -> None:
    ...
def sphere(gen: Generator, out: numpy.ndarray, threads: typing.SupportsInt | typing.SupportsIndex) -> None:
    ...
def subbotin(gen: Generator, out: numpy.ndarray, r: typing.SupportsFloat | typing.SupportsIndex, loc: typing.SupportsFloat | typing.SupportsIndex, scale: typing.SupportsFloat | typing.SupportsIndex, threads: typing.SupportsInt | typing.SupportsIndex) -> None:
    ...
def uniform(gen: Generator, out: numpy.ndarray, low: typing.SupportsFloat | typing.SupportsIndex, high: typing.SupportsFloat | typing.SupportsIndex, threads: typing.SupportsInt | typing.SupportsIndex) -> None:
    ...
def ziggurat_closure() -> tuple[float, float]:
    """
    how far the layer recursion misses f(0) = 1 (normal, exponential); ~0 when R is right
    """
CHUNK: int = 16384
CHUNK_BLOCKS: int = 16777216
