"""The confidence fit's folds hold an article (a run's `group`) out whole."""

import random

import numpy as np
from sklearn.metrics import roc_auc_score

from deltaseek.metrics.calibration import expected_calibration_error
from deltaseek.optimize import fit_confidence
from deltaseek.optimize.confidence_folds import fold_groups, held_out_folds


def test_a_group_holding_nearly_all_of_one_outcome_is_cut_into_a_piece_a_fold_and_the_others_stay_whole():
    groups = np.array(["harbour"] * 40 + ["orchard"] * 40 + ["lighthouse"] * 40)
    ids = np.array([f"q{i}" for i in range(120)])
    y = np.array([1] * 40 + [0] * 80)  # every unanswerable question is of one article
    cut = fold_groups(groups, ids, y)
    assert set(cut[:40]) == {f"harbour / {i}" for i in range(5)} and list(cut[40:]) == list(groups[40:])
    y[:10] = 0
    y[40:50] = 1  # three quarters of them in one article: it stays whole
    assert list(fold_groups(groups, ids, y)) == list(groups)


def test_the_folds_never_score_a_run_with_a_model_fitted_on_its_own_group():
    rng = random.Random(0)
    groups = np.array([f"article {rng.randrange(12)}" for _ in range(300)])
    y = np.array([rng.random() < 0.3 for _ in range(300)], dtype=int)
    folds = held_out_folds(np.zeros((300, 1)), y, groups, seed=0)
    assert len(folds) == 5 and sorted(np.concatenate([held for _, held in folds])) == list(range(300))
    assert all(not set(groups[fitted]) & set(groups[held]) for fitted, held in folds)
    # fewer groups than folds: one a fold
    two = np.array(["a"] * 150 + ["b"] * 150)
    assert [set(two[held]) for _, held in held_out_folds(np.zeros((300, 1)), y, two, seed=0)] in (
        [{"a"}, {"b"}], [{"b"}, {"a"}])


def test_runs_without_groups_and_folds_missing_an_outcome_fold_the_runs():
    y = np.array([1] * 30 + [0] * 70)
    own = np.array([f"q{i}" for i in range(100)])
    assert len(held_out_folds(np.zeros((100, 1)), y, own, seed=0)) == 5
    # every right run in one group: holding it out leaves the others none to learn from
    groups = np.array(["a"] * 30 + ["b"] * 35 + ["c"] * 35)
    folds = held_out_folds(np.zeros((100, 1)), y, groups, seed=0)
    assert len(folds) == 5 and any(set(groups[held]) == {"a", "b", "c"} for _, held in folds)


def article_runs(seed: int = 0) -> list[dict]:
    """Runs of two articles: where the reader's span is the answer, one article's are always right,
    the other's half the time; elsewhere a fifth of them are."""
    rng = random.Random(seed)
    rows = []
    for i in range(400):
        article = "river" if i < 200 else "mountain"
        agrees = rng.random() < 0.5
        right = rng.random() < ((1.0 if article == "river" else 0.5) if agrees else 0.2)
        rows.append({"id": f"q{i}", "split": "dev", "answerability": "direct", "group": article,
                     "scores": {"token_f1": float(right)},
                     "confidence_signals": {"origin_extracted": 1.0, "answer_is_read_span": float(agrees)}})
    return rows


def test_the_fit_scores_an_article_by_a_model_fitted_on_the_others():
    """Fitted on the other article alone, each article's answers are told the other's rate: the
    held-out figures say how far the model carries to an article it never saw, which folds of mixed
    runs hide."""
    grouped = article_runs()
    mixed = [{key: value for key, value in row.items() if key != "group"} for row in grouped]
    model, held, right = fit_confidence.fit(grouped)
    _, mixed_held, mixed_right = fit_confidence.fit(mixed)
    river_agreeing = [c for c, row in zip(held, grouped) if row["group"] == "river"
                      and row["confidence_signals"]["answer_is_read_span"]]
    assert max(river_agreeing) < 0.65  # learned on the mountain runs, where half were right
    assert expected_calibration_error(held, right) > expected_calibration_error(mixed_held, mixed_right) + 0.05
    assert model.metrics["held_out_ece"] == round(expected_calibration_error(held, right), 4)


def test_held_out_probabilities_rank_the_outcome_above_the_rest_when_one_group_holds_it():
    """One article holds every unanswerable question, and a signal tells them apart there; the
    other articles' questions are answerable. Held out by the folds, the probability that a question
    is unanswerable must still rank the unanswerable ones first: cut in two, that article's
    questions were scored by models that had seen half as many, and ranked below the rest."""
    rng = np.random.default_rng(0)
    n = 600
    groups = np.array(["harbour"] * 200 + [f"article {i % 8}" for i in range(400)])
    y = np.array([int(i < 200 and i % 2 == 0) for i in range(n)])
    x = np.zeros((n, len(fit_confidence.CONFIDENCE_SIGNALS)))
    x[:, 0] = y + rng.normal(0, 1.0, n)  # the signal: higher for an unanswerable question
    ids = np.array([f"q{i}" for i in range(n)])
    _, held = fit_confidence.calibrated_linear(x, y, "sigmoid", 0, fold_groups(groups, ids, y))
    assert roc_auc_score(y, held) > 0.7
