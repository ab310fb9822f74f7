"""A software prefetch for numba kernels: ask the CPU to start loading ``arr[i]`` now.

The n-tuple tables are hundreds of MiB read at random, so a TD step waits on memory, not on
arithmetic. Issuing every feature's load early (all four after-states of a move at once, and
the next board of a backward TD sweep while the current one is updated) lets those waits
overlap; TDL2048 gets the same effect from its C++ compiler. numba has no prefetch, so this is
LLVM's ``llvm.prefetch`` intrinsic (read, high locality, data cache).
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


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
