"""The numbers the native module takes for element types, operations and layouts: their
indices here (src/lib.rs matches on the same numbers). Numbers, not names, so that a call
converts no string."""

#: Element types, by their NumPy/PyTorch names.
DTYPES = ("float32", "float64", "float16", "bfloat16", "int32", "uint32", "int64", "uint64")
#: Operations, by the library's names.
OPS = ("sum", "mean", "min", "max", "argmin", "argmax")

DTYPE_CODE = {name: code for code, name in enumerate(DTYPES)}
OP_CODE = {name: code for code, name in enumerate(OPS)}

WHOLE, ROWS, COLUMNS, SEGMENTS = range(4)

ITEMSIZE = {
    "float32": 4,
    "float64": 8,
    "float16": 2,
    "bfloat16": 2,
    "int32": 4,
    "uint32": 4,
    "int64": 8,
    "uint64": 8,
}

FLOATS = frozenset(("float32", "float64", "float16", "bfloat16"))


def result_dtype(op: str, dtype: str) -> str:
    """The dtype of ``op``'s result for ``dtype`` elements (argmin/argmax: their values')."""
    if op == "sum":
        return "float32" if dtype in ("float16", "bfloat16") else dtype
    if op == "mean":
        if dtype in FLOATS:
            return "float64" if dtype == "float64" else "float32"
        return "float64"
    return dtype
