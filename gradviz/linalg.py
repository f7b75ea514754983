"""gradviz.linalg: torch.linalg's functions that a NumPy engine serves (norms, determinants,
inverses, solves (triangular too), QR, pseudo-inverses, least squares, ranks, condition numbers, Cholesky, singular and symmetric eigen values, products), named as torch's."""
from .functions.linalg import (cholesky_ex_free as cholesky, cond, det, eigvalsh, inv, linalg_cross as cross,
                               linalg_diagonal as diagonal, linalg_matrix_exp as matrix_exp, linalg_norm as norm, matrix_norm, matrix_power, multi_dot,
                               linalg_qr as qr, lstsq, matrix_rank, pinv, slogdet, solve, solve_triangular, svdvals, vander, vecdot, vector_norm)
from .functions.linalg import _LinAlgError as LinAlgError, matmul  # noqa: F401
