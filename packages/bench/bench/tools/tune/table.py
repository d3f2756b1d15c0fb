"""What a tune prints: each stage's candidates with their rounds, and the precision
comparison's sentence."""

from .candidates import label


def unit(kind):
    return "examples/s" if kind == "train" else "images/s"


def stage_table(stage, outcomes, chosen, *, default, precision, rounds, min_gain, kind, acceptable):
    """The stage's candidates, the first being the one the others are measured against:
    median [range]; accuracy; ratio to the first, the chosen one marked `->`, and why a
    faster one was not chosen. acceptable(outcome): None, or why it may not be chosen."""
    first = outcomes[0].throughput
    lines = [
        f"stage {stage}: {len(outcomes)} candidates x {rounds} rounds, "
        f"alternating ({unit(kind)}, median [range]; accuracy; ratio to the first)"
    ]
    for o in outcomes:
        name = label(o.settings, default)
        if o.precision != precision:
            name += f" at {o.precision}"
        if o.throughput:
            low, high = o.spread
            text = f"{o.throughput:.1f} [{low:.1f}-{high:.1f}]"
            text += f"; {o.accuracy:.4f}" if o.accuracy is not None else "; -"
            text += f"; {o.throughput / first:.3f}x" if first else ""
        else:
            text = o.error
        why = acceptable(o) if o.precision == precision else None
        note = f"  (not eligible: {why})" if why and o.ok else ""
        faster = (
            chosen is not None
            and chosen.ok
            and o is not chosen
            and o.ok
            and first
            and o.throughput > chosen.throughput
        )  # and yet not chosen
        if faster and not why:
            note = (
                "  (less than the minimum gain over the first)"
                if o.throughput < first * (1 + min_gain)
                else "  (not clearly faster than the first: the rounds overlap)"
            )
        mark = "->" if o is chosen else "  "
        lines.append(f" {mark} {name}: {text}{note}")
    return "\n".join(lines)


def precision_comparison(other, precision, outcomes, kind):
    """The sentence `--compare-precision` ends with: the other precision's throughput over
    the tuned one's, with the same settings, measured alternating."""
    base, alt = outcomes
    if not (base.ok and alt.ok):
        return f"{other}: no comparison ({alt.error or base.error})"
    accuracy = (
        f" (accuracy {alt.accuracy:.4f} against {base.accuracy:.4f})"
        if alt.accuracy is not None and base.accuracy is not None
        else ""
    )
    return (
        f"{other} would run at {alt.throughput / base.throughput:.2f}x the {unit(kind)} "
        f"of {precision} with the tuned settings{accuracy}. Not applied: precision is the "
        f"run's own axis; `python -m bench tune ... precision={other}` tunes and "
        f"`precision={other} tuned=true` uses it."
    )
