"""Backend: LLVM code generation (llvmlite) and the runtime that runs modules on numpy arrays."""
