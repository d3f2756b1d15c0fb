# The R worker (framework=r_mxnet, r_keras): Rscript worker.R run.json
#
# The worker contract is the Python runtime's (bench_shared.worker: run.json in, result JSON and
# progress events out, batching, seeding, timing, weight loading): this script starts that
# runtime in the driven environment's Python through reticulate (RETICULATE_PYTHON, set by the
# orchestrator) and hands it the task module written in R: <r_models>/loop.R and
# <r_models>/<task>.R, whose build_model, slots, train_epoch and predict (and the optional
# train: every epoch in one call) become Python callables. Batches, models and outputs stay
# Python objects (every import `convert = FALSE`): R holds references and converts only plain
# data (run.json's fields, scalars).
args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 1) stop("usage: Rscript worker.R run.json")
here <- dirname(normalizePath(sub("^--file=", "",
                                  grep("^--file=", commandArgs(FALSE), value = TRUE))))
python <- Sys.getenv("RETICULATE_PYTHON")
if (!nzchar(python)) {
  stop("RETICULATE_PYTHON is not set: the orchestrator sets it to the driven environment's ",
       "python (python -m bench framework=r_mxnet ... starts this worker)")
}
suppressPackageStartupMessages(library(reticulate))
use_python(python, required = TRUE)

TASK_FUNCTIONS <- c("build_model", "slots", "train_epoch", "predict", "native_layout",
                    "train")
builtins <- import_builtins(convert = FALSE)
np <- import("numpy", convert = FALSE)

source(file.path(here, "numpy2.R"))  # a clear error where R would crash on a numpy-2 array

# Calls f(x, y) for every (x, y) batch of the runtime's batch iterator, in its order (the
# runtime stamps each hand-over); x and y stay numpy arrays.
for_each_batch <- function(batches, f) {
  batches <- builtins$iter(batches)
  while (!is.null(batch <- iter_next(batches, completed = NULL))) {
    f(py_get_item(batch, 0L), py_get_item(batch, 1L))
  }
}

# The same for inference batches (x alone).
for_each_input <- function(batches, f) {
  batches <- builtins$iter(batches)
  while (!is.null(x <- iter_next(batches, completed = NULL))) f(x)
}

# The task module for the runtime: the R functions of <r_models>/<task>.R as Python callables
# that receive Python objects unconverted.
load_task <- function(run) {
  run <- py_to_r(run)  # plain data: strings and numbers
  models <- file.path(here, run$framework$r_models)
  task <- new.env(parent = globalenv())
  for (file in file.path(models, c("loop.R", paste0(run$task$name, ".R")))) {
    if (file.exists(file)) sys.source(file, envir = task, keep.source = FALSE)
  }
  defined <- intersect(TASK_FUNCTIONS, ls(task))
  functions <- lapply(mget(defined, envir = task), r_to_py, convert = FALSE)
  do.call(import("types", convert = FALSE)$SimpleNamespace, functions)
}

worker <- import("bench_shared.worker", convert = FALSE)
status <- py_to_r(worker$main(list(args[[1]]), r_to_py(load_task, convert = FALSE)))
quit(save = "no", status = status)
