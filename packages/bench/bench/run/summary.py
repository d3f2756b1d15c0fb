"""The one line a finished run prints: which run, its time, throughput, accuracy and
utilisation, or its status and why."""


def label(result):
    """`torch cnn cpu fp32 preset=quick`: which run this is."""
    c = result["config"]
    return (
        f"{c['framework']['name']} {c['task']['name']} {c['device']['name']} "
        f"{c['precision']['name']} preset={c['preset']['name']}"
        + (f" twin={c['twin']}" if c.get("twin") else "")  # the A/A control's second name
    )


METRIC_NAMES = {"accuracy": "accuracy", "mean_roc_auc": "mean ROC-AUC"}


def summary_line(result):
    c = result["config"]
    head = label(result)
    if result["status"] != "ok":
        return f"{head}: {result['status'].upper()} - {result.get('error', '')}"
    s = result["stats"]
    tail = _utilisation(s)
    if c["task"]["kind"] == "train":
        steady = s["steady_epoch_seconds"]
        return (
            (
                f"{head}: train {s['train_seconds']:.1f} s (first epoch "
                f"{s['first_epoch_seconds']:.1f} s, steady {steady:.1f} s/epoch), "
                if steady is not None
                else f"{head}: train {s['train_seconds']:.1f} s (one epoch), "
            )
            + (
                f"{s['examples_per_second']:.0f} examples/s, "
                f"test {METRIC_NAMES[result.get('accuracy_metric', 'accuracy')]} "
                f"{result['accuracy']:.4f} on {result['test_examples']}"
            )
            + tail
        )
    return (
        f"{head}: {s['seconds_per_1000_images']:.2f} s per 1000 images "
        f"({s['images_per_second']:.1f} images/s, warm-up {s['warmup_seconds']:.1f} s)" + tail
    )


def _utilisation(stats):
    """`, utilisation 0.77 (host 0.25)`: of the framework's own matmul peak, of the host's."""
    parts = []
    if stats.get("utilisation") is not None:
        parts.append(f"utilisation {stats['utilisation']:.2f}")
    if stats.get("host_utilisation") is not None:
        parts.append(
            f"(host {stats['host_utilisation']:.2f})"
            if parts
            else f"host utilisation {stats['host_utilisation']:.2f}"
        )
    return ", " + " ".join(parts) if parts else ""
