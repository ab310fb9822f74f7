"""CPU instructions numba does not expose, as LLVM intrinsics: a software prefetch and BMI2's
parallel bit extract.

``prefetch``: the n-tuple tables are hundreds of MiB read at random, so a TD step waits on
memory, not on arithmetic. Issuing every feature's load early (all four after-states of a move
at once, the next boards of a backward TD sweep while the current one is updated) lets those
waits overlap; TDL2048 gets the same effect from its C++ compiler. This is LLVM's
``llvm.prefetch`` (read, high locality, data cache).

``pext``: gathers the bits of ``x`` selected by ``mask`` into the low bits, in order, in one
instruction (BMI2, Haswell and Zen onwards). An n-tuple whose cells are in ascending order reads
its table index as ``pext(board, mask of its nibbles)``, however many runs the cells form
(TDL2048+ does the same). ``HAS_PEXT`` says whether this machine has it; kernels generated for
a machine without it (or for a fixed ``NUMBA_CPU_NAME`` target) use mask-and-shift runs instead.
"""

from __future__ import annotations

from typing import Any

import numba
from llvmlite import binding as llvm_binding
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


def _host_has_bmi2() -> bool:
    if getattr(numba.config, "CPU_NAME", None):
        return False  # compiling for a named (portable) target: do not assume BMI2
    try:
        return bool(llvm_binding.get_host_cpu_features().get("bmi2", False))
    except RuntimeError:
        return False


HAS_PEXT: bool = _host_has_bmi2()


@intrinsic
def prefetch(typingctx: Any, arr: types.Array, idx: types.Integer) -> Any:
    """``prefetch(arr, i)``: a hint that ``arr[i]`` (the first element of row ``i`` of an n-d
    array; ``0 <= i < len(arr)``) is read soon."""
    sig = types.void(arr, idx)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        zero = context.get_constant(signature.args[1], 0)
        at = [args[1]] + [zero] * (aryty.ndim - 1)
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, at, wraparound=False)
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def pext(typingctx: Any, x: types.Integer, mask: types.Integer) -> Any:
    """``pext(x, mask)`` -> uint64: the bits of ``x`` where ``mask`` is 1, packed into the low
    bits in order (``pext(0x4321, 0xF0F) == 0x31``). Only where ``HAS_PEXT``."""
    sig = types.uint64(types.uint64, types.uint64)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        i64 = ir.IntType(64)
        fnty = ir.FunctionType(i64, [i64, i64])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.x86.bmi.pext.64")
        return builder.call(fn, [args[0], args[1]])

    return sig, codegen
