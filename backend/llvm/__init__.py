"""The TIR to LLVM code generator's parts, one concern per module; ``backend/llvm_codegen.py`` is
the entry (``codegen``, ``LLVMModule``, signatures).

- ``types``: LLVM types of TIR dtypes (register, memory, ABI forms) and constant helpers.
- ``errors``: ``CodegenError`` and the excerpt of a node its messages show.
- ``module_builder``: one LLVM module: declarations, the status-code message table, strings, loop metadata.
- ``function_builder``: ``FunctionBuilder``, one LLVM function, composed of the lowering mixins:
  ``expressions`` (scalar and vector arithmetic, casts, comparisons), ``memory`` (buffer addressing,
  loads, stores, allocations), ``calls`` (intrinsics of ``ir/intrinsics.py`` and builtins),
  ``statements`` (control flow and serial loops) and ``parallel`` (loops outlined onto the thread pool).
"""
