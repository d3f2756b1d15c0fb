# reticulate < 1.36 predates numpy 2 and cannot load its C API: a numpy-2 array "converted" to R
# silently stays a Python object (1.28 with numpy 2.4 here; the issue saw R crash), an R array
# passed to Python fails. The R rows keep arrays on the Python side; should a conversion be
# asked for all the same, it fails here with the reason (sourced by worker.R).
local({
  np <- import("numpy", convert = FALSE)
  numpy_version <- py_to_r(np$`__version__`)
  if (package_version(numpy_version) >= "2" && packageVersion("reticulate") < "1.36") {
    registerS3method("py_to_r", "numpy.ndarray", envir = asNamespace("reticulate"),
                     function(x) {
                       stop("reticulate ", packageVersion("reticulate"), " cannot convert ",
                            "numpy ", numpy_version, " arrays to R (it predates numpy 2): ",
                            "keep the array on the Python side (import with convert = FALSE)")
                     })
  }
})
