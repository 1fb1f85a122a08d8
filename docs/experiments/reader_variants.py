"""Reader variants tried on the training articles only: the record's reader-level tables.

    python docs/experiments/reader_variants.py ranker       # leave-one-article-out top-1 F1 of each ranker
    python docs/experiments/reader_variants.py synthetic    # synthetic unanswerables: transfer to an unseen article
    python docs/experiments/reader_variants.py losses       # where the shipped ranker loses the gold
    python docs/experiments/reader_variants.py sentences    # the gold's sentence chosen, and the span within it
    python docs/experiments/reader_variants.py trimmed      # the question's own words trimmed from the span's ends
    python docs/experiments/reader_variants.py stacked      # boosted trees over the features and the ranker's score
    python docs/experiments/reader_variants.py coverage     # answerability with what of the question the sentence lacks
    python docs/experiments/reader_variants.py calibration  # the threshold chosen on dev against one chosen on held-out articles
    python docs/experiments/reader_variants.py zelda        # answerability fitted on held-out articles' scores, scored on Zelda
    python docs/experiments/reader_variants.py parsed [PIPELINE]  # features from a spaCy parse (spaCy not a dependency: install it)
    python docs/experiments/reader_variants.py together [PIPELINE]  # every lever at once: seven features, the parse, trees

Both read the shipped reader's train and dev splits (`train_reader.dataset_questions`; cached in
`results/reader-questions.pkl`, a file this script alone writes and reads); SQuAD's scored
articles are never read. `ranker` holds out each SQuAD training article in turn (MuSiQue's and the
seed set's train splits always train) and scores the ranker's best candidate on its answerable
questions, no abstention. `synthetic` trains without the one article whose questions include
unanswerable ones, then scores the answerability model on that article's questions.
"""

from __future__ import annotations

import bisect
import collections
import json
import math
import pickle
import random
import re
import sys
from dataclasses import replace
from pathlib import Path

import dspy
import numpy as np
from sklearn.metrics import roc_auc_score

from deltaseek.bundled import labeled_set
from deltaseek.optimize.convert_squad2 import DEFAULT_SOURCE, SOURCE_FILE
from deltaseek.optimize.evaluate import corpora_for, load_dataset, select
from deltaseek.optimize.train_reader import SHIPPED_DATASETS, dataset_questions, read_questions
from deltaseek.programs.agent.learned_reader import train
from deltaseek.programs.agent.learned_reader.features import stems_of, wh_key
from deltaseek.programs.agent.learned_reader.model import ANSWERABILITY_FEATURES
from deltaseek.programs.agent.learned_reader.questions import asked_noun
from deltaseek.programs.agent.learned_reader.read import summary_features
from deltaseek.programs.index import CorpusIndex
from deltaseek.programs.text import fold_accents, named_entities, stem, stopwords

CACHE = Path("results/reader-questions.pkl")
EXTRA = ["question_bigrams_in_sentence", "question_bigrams_in_window", "left_three_in_question",
         "right_three_in_question", "nearest_in_sentence", "best_window", "window_gap"]


def cached_questions() -> dict:
    if not CACHE.exists():
        CACHE.parent.mkdir(exist_ok=True)
        CACHE.write_bytes(pickle.dumps({name: dataset_questions(str(labeled_set(name))) for name in SHIPPED_DATASETS}))
    return pickle.loads(CACHE.read_bytes())


def article_of() -> dict[str, str]:
    """Each SQuAD question's article, from the source file the dataset was converted from."""
    data = json.loads((DEFAULT_SOURCE / SOURCE_FILE).read_text())["data"]
    return {qa["id"]: a["title"] for a in data for p in a["paragraphs"] for qa in p["qas"]}


def add_extra_features(q: train.Question) -> None:
    """The seven features tried beside the shipped ones, written into each row's features."""
    words = [(stem(w), w.lower() in stopwords()) for w in re.findall(r"\w[\w'’]*", fold_accents(q.question))]
    bigrams = {(a, b) for (a, sa), (b, sb) in zip(words, words[1:]) if not (sa and sb)} or {("", "")}
    content = {s for s, is_stop in words if not is_stop}
    best_window = max((r.features.get("window_share", 0.0) for r in q.rows), default=0.0)
    by_sentence = collections.defaultdict(list)
    for r in q.rows:
        by_sentence[id(r.sentence)].append(r)
        stems = [s for _, s in r.sentence.words]
        offsets = [o for o, _ in r.sentence.words]
        first = bisect.bisect_left(offsets, r.candidate.start)
        last = max(first, bisect.bisect_left(offsets, r.candidate.end) - 1)
        window = stems[max(0, first - 6):first] + ["|"] + stems[last + 1:last + 7]
        r.features.update({
            "question_bigrams_in_sentence": len(bigrams & set(zip(stems, stems[1:]))) / len(bigrams),
            "question_bigrams_in_window": len(bigrams & set(zip(window, window[1:]))) / len(bigrams),
            "left_three_in_question": sum(s in content for s in stems[max(0, first - 3):first]) / 3,
            "right_three_in_question": sum(s in content for s in stems[last + 1:last + 4]) / 3,
            "best_window": float(best_window > 0 and r.features.get("window_share", 0.0) == best_window),
            "window_gap": best_window - r.features.get("window_share", 0.0)})
    for rows in by_sentence.values():
        nearest = max(r.features.get("closeness", 0.0) for r in rows)
        for r in rows:
            r.features["nearest_in_sentence"] = float(r.features.get("closeness", 0.0) == nearest)


def training_questions(parts: dict) -> tuple[dict[str, str], list, list]:
    """Each SQuAD question's article, SQuAD's train and dev questions, and MuSiQue's and the seed
    set's train questions (which every held-out fold trains on)."""
    squad = [q for split in ("train", "dev") for q in parts["squad2_articles"][split]]
    return article_of(), squad, parts["musique"]["train"] + parts["seed_set"]["train"]


def held_out_folds(articles: dict, squad: list, others: list):
    """For each SQuAD training article in turn: the questions to train on without it, and its own."""
    for article in sorted({articles[q.id] for q in squad}):
        yield ([q for q in squad if articles[q.id] != article] + others,
               [q for q in squad if articles[q.id] == article])


def by_ranker(ranker):
    """The candidate a linear ranker scores best."""
    return lambda q: max(q.rows, key=lambda r: ranker.score(r.features))


def top_one(pick, questions) -> tuple[float, float]:
    """F1 and exact match of the candidate `pick` chooses, over questions with candidates."""
    texts = [pick(q).candidate.text for q in questions]
    return (sum(train.best_f1(t, q.answers) for t, q in zip(texts, questions)) / len(questions),
            sum(train.is_gold(t, q.answers) for t, q in zip(texts, questions)) / len(questions))


def ranker_line(name: str, scores: list[tuple[float, float]]) -> None:
    f1, em = np.mean(scores, axis=0)
    print(f"| {name} | {f1:.3f} | {em:.3f} | " + " ".join(f"{s[0]:.3f}" for s in scores) + " |", flush=True)


RANKER_HEADER = "| ranker | top-1 F1 | exact | per held-out article (F1) |\n|---|---:|---:|---|"


def hard_negative_ranker(questions, share: float = 0.5):
    """Half of each question's negatives the wrong candidates a first ranker scores best."""
    first = train.fit_ranker(questions)
    sample = random.Random(0).sample
    hard = int(train.NEGATIVES_PER_QUESTION * share)
    kept = []
    for q in questions:
        right = [r for r in q.rows if train.is_gold(r.candidate.text, q.answers)]
        wrong = sorted((r for r in q.rows if not train.is_gold(r.candidate.text, q.answers)),
                       key=lambda r: -first.score(r.features))
        rest = wrong[hard:]
        kept.append(replace(q, rows=right + wrong[:hard] + sample(rest, min(len(rest), train.NEGATIVES_PER_QUESTION - hard))))
    return train.fit_ranker(kept)


def typed_apart(questions) -> None:
    """Separate weights for questions naming their answer's type: each feature doubled for them."""
    for q in questions:
        if q.kind != "other":
            for r in q.rows:
                r.features.update({f"typed:{n}": v for n, v in list(r.features.items())})


def ranker_table(parts: dict) -> None:
    articles, squad, others = training_questions(parts)
    shipped = list(train.FEATURES)

    def row(name, fit, features):
        train.FEATURES = features
        ranker_line(name, [top_one(by_ranker(fit(trained)), [q for q in own if q.answerable and q.rows])
                           for trained, own in held_out_folds(articles, squad, others)])

    print(RANKER_HEADER)
    row("shipped features", train.fit_ranker, shipped)
    for q in squad + others:
        add_extra_features(q)
    row("+ seven features", train.fit_ranker, shipped + EXTRA)
    row("+ seven features, half hard negatives", hard_negative_ranker, shipped + EXTRA)
    typed_apart(squad + others)
    row("+ seven features, typed questions apart", train.fit_ranker,
        shipped + EXTRA + [f"typed:{n}" for n in shipped + EXTRA])


RELATIVE = ["sentence_share", "window_share", "name_share", "support", "closeness", "log_distance",
            "sentence_relevance", "left_share", "right_share", "in_question_share"]


def tree_inputs(q: train.Question, ranker=None) -> np.ndarray:
    """The shipped features, each of RELATIVE against the question's best and worst candidate
    (trees score one candidate at a time, so they are told how it compares), and the linear
    ranker's score and its gap to the best."""
    columns = [train.matrix([r.features for r in q.rows], train.FEATURES)]
    for name in RELATIVE:
        v = np.array([r.features.get(name, 0.0) for r in q.rows])
        columns += [(v - v.max())[:, None], (v - v.min())[:, None]]
    if ranker is not None:
        s = np.array([ranker.score(r.features) for r in q.rows])
        columns += [s[:, None], (s - s.max())[:, None]]
    return np.hstack(columns)


def fit_trees(questions, rankers: dict | None = None, negatives: int = 60):
    """Gradient-boosted trees, one candidate at a time: is it the gold? `rankers` gives each
    question the linear ranker that scores it (one that did not train on it)."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    rng = random.Random(0)
    inputs, labels = [], []
    for q in questions:
        gold = [train.is_gold(r.candidate.text, q.answers) for r in q.rows]
        if not any(gold):
            continue
        wrong = [i for i, g in enumerate(gold) if not g]
        kept = [i for i, g in enumerate(gold) if g] + rng.sample(wrong, min(len(wrong), negatives))
        inputs.append(tree_inputs(q, rankers[q.id] if rankers else None)[kept])
        labels += [int(gold[i]) for i in kept]
    model = HistGradientBoostingClassifier(max_iter=300, learning_rate=0.05, max_leaf_nodes=31, min_samples_leaf=40,
                                           l2_regularization=1.0, random_state=0)
    return model.fit(np.vstack(inputs), np.array(labels))


def cross_fitted_trees(questions):
    """Trees that read the linear ranker's score, each question's score from a ranker trained on
    the other half of the questions (two folds), as at run time it never trained on the question."""
    halves = [[q for q in questions if train.fold_of(q.id) == f] for f in (0, 1)]
    by_fold = [train.fit_ranker(halves[1 - f]) for f in (0, 1)]
    return fit_trees(questions, {q.id: by_fold[f] for f in (0, 1) for q in halves[f]})


def stacked_table(parts: dict) -> None:
    """Leave-one-article-out top-1 F1 of the shipped ranker, of boosted trees alone, and of trees
    that read the ranker's score too (cross-fitted on two folds, as at run time it never trained
    on the question it scores)."""
    found = collections.defaultdict(list)
    for trained, own in held_out_folds(*training_questions(parts)):
        scored = [q for q in own if q.answerable and q.rows]
        ranker = train.fit_ranker(trained)
        trees = fit_trees(trained)
        stacked = cross_fitted_trees(trained)
        picks = {"shipped ranker": by_ranker(ranker),
                 "boosted trees": lambda q: q.rows[int(np.argmax(trees.decision_function(tree_inputs(q))))],
                 "boosted trees + ranker's score": lambda q: q.rows[int(np.argmax(
                     stacked.decision_function(tree_inputs(q, ranker))))]}
        for name, pick in picks.items():
            found[name].append(top_one(pick, scored))
    print(RANKER_HEADER)
    for name, scores in found.items():
        ranker_line(name, scores)


COVERAGE = ("missing_max", "missing_passage_max", "missing_count", "missing_facts_share", "negation_mismatch")


def add_coverage_features(q: train.Question) -> None:
    """What of the question each candidate's sentence does not say: the rarest question word it
    lacks (and its passage lacks), the share it lacks, the share no fact read holds, and whether
    one of question and sentence is negated and the other not."""
    from deltaseek.programs.agent.learned_reader.features import rarity
    from deltaseek.programs.agent.learned_reader.questions import NEGATION, sentences

    terms = stems_of(q.question)
    if not terms or not q.rows:
        return
    rare = rarity([s for f in q.facts for s in sentences(f.text)])
    weight = {t: rare.get(t, max(rare.values(), default=1.0)) for t in terms}
    top = max(weight.values())
    read = stems_of(" ".join(f"{f.title} {f.text}" for f in q.facts))
    negated = bool(NEGATION.search(q.question))
    for r in q.rows:
        said = stems_of(r.sentence.text)
        r.features.update({
            "missing_max": max((weight[t] for t in terms if t not in said), default=0.0) / top,
            "missing_passage_max": max((weight[t] for t in terms if t not in r.sentence.passage_stems), default=0.0) / top,
            "missing_count": sum(t not in said for t in terms) / len(terms),
            "missing_facts_share": sum(t not in read for t in terms) / len(terms),
            "negation_mismatch": float(negated != bool(NEGATION.search(r.sentence.text)))})


def coverage_table(parts: dict) -> None:
    """Trained without the one training article whose questions include unanswerable ones, the
    answerability model scored on that article, with and without the coverage features."""
    from deltaseek.programs.agent.learned_reader import read

    _, kept, scored = without_unanswerable_article(parts, article_of())
    answerability_header("answerability features")
    answerability_line("shipped", train.fit_reader(kept["train"], kept["dev"], 0.15), scored)
    for name in parts:
        for split in parts[name].values():
            for q in split:
                add_coverage_features(q)
    read.BEST_FEATURES = (*read.BEST_FEATURES, *COVERAGE)
    train.ANSWERABILITY_FEATURES = (*train.ANSWERABILITY_FEATURES, *(f"best_{n}" for n in COVERAGE))
    answerability_line("+ what the sentence lacks", train.fit_reader(kept["train"], kept["dev"], 0.15), scored)


def loss_table(parts: dict) -> None:
    """Of the answerable questions of each held-out article: the gold in the passages read, among
    the candidates (exactly), and at which rank of the ranker trained without that article."""
    counts = collections.Counter()
    for trained, own in held_out_folds(*training_questions(parts)):
        ranker = train.fit_ranker(trained)
        for q in (q for q in own if q.answerable):
            ranked = sorted(q.rows, key=lambda r: -ranker.score(r.features))
            first = next((i for i, r in enumerate(ranked) if train.is_gold(r.candidate.text, q.answers)), None)
            counts.update({"questions": 1, "candidates": len(ranked),
                           "gold in the passages read": any(a.lower() in f.text.lower() for f in q.facts for a in q.answers),
                           "gold among the candidates": first is not None,
                           **{f"gold ranked within {k}": first is not None and first < k for k in (1, 3, 10)}})
    n = counts.pop("questions")
    print(f"{n} answerable questions, {counts.pop('candidates') / n:.0f} candidates each on average")
    for name, count in counts.items():
        print(f"| {name} | {count / n:.1%} |")


def gold_sentence_rows(q: train.Question) -> list:
    """The candidates of the question's sentences that hold a gold answer."""
    return [r for r in q.rows if any(a.lower() in r.sentence.text.lower() for a in q.answers)]


def sentence_table(parts: dict) -> None:
    """Whether the ranker loses the gold in choosing the sentence or the span within it: of the
    answerable questions of each held-out article, pooled, how often a sentence read holds the
    gold, how often the best candidate's sentence does, and the top-1 F1 of the ranker with and
    without the gold's sentences given to it (the best candidate among theirs alone)."""
    counts = collections.Counter()
    for trained, own in held_out_folds(*training_questions(parts)):
        ranker = train.fit_ranker(trained)
        for q in (q for q in own if q.answerable and q.rows):
            best = by_ranker(ranker)(q)
            holding = gold_sentence_rows(q)
            given = max(holding, key=lambda r: ranker.score(r.features)) if holding else None
            counts.update({"questions": 1, "top-1 F1": train.best_f1(best.candidate.text, q.answers),
                           "a sentence read holds the gold": bool(holding),
                           "the best candidate's sentence holds the gold": any(r.sentence is best.sentence for r in holding),
                           "top-1 F1 with the gold's sentences given": train.best_f1(given.candidate.text, q.answers)
                           if given else 0.0})
    n = counts.pop("questions")
    print(f"{n} answerable questions with candidates\n| of them | share or F1 |\n|---|---:|")
    for name, value in counts.items():
        print(f"| {name} | {value / n:.3f} |")


def trimmed(span: str, question: str) -> str:
    """The span without the words the question already says at either end ("12 bridges" for
    "How many bridges ...?"), one word at least."""
    asked = {stem(fold_accents(w.lower())) for w in re.findall(r"\w+", question)}
    words = span.split()
    said = lambda w: stem(fold_accents(re.sub(r"^\W+|\W+$", "", w).lower())) in asked
    while len(words) > 1 and said(words[-1]):
        words.pop()
    while len(words) > 1 and said(words[0]):
        words.pop(0)
    return " ".join(words)


def trimmed_table(parts: dict) -> None:
    """Top-1 F1 of the ranker's pick as it is and with the question's words trimmed from its ends,
    by asking phrase (the ten commonest), pooled over the held-out articles."""
    found = collections.defaultdict(lambda: np.zeros(4))
    for trained, own in held_out_folds(*training_questions(parts)):
        ranker = train.fit_ranker(trained)
        for q in (q for q in own if q.answerable and q.rows):
            best = by_ranker(ranker)(q).candidate.text
            cut = trimmed(best, q.question)
            row = np.array([1, train.best_f1(best, q.answers), train.best_f1(cut, q.answers), cut != best])
            found[wh_key(q.question)] += row
            found["all"] += row
    print("| asking phrase | questions | top-1 F1 | trimmed | spans trimmed |\n|---|---:|---:|---:|---:|")
    for key, (n, f1, cut, changed) in sorted(found.items(), key=lambda kv: -kv[1][0])[:11]:
        print(f"| {key} | {n:.0f} | {f1 / n:.3f} | {cut / n:.3f} | {changed:.0f} |")


AUXILIARY = re.compile(r"\b(is|was|are|were|did|does|do|has|had|have|can|could|will|would)\b", re.I)


def unanswerable_variant(question: str, names: list[str], rng: random.Random) -> tuple[str, str] | None:
    """A question the passages no longer answer: another name of the article for one it names, a
    different figure, or "not" after its auxiliary ("Who did the band sign with?" -> "Who did not
    the band sign with?": ungrammatical, as a sketch of the negations a rewriter would make)."""
    options = [("name", question.replace(n, rng.choice(others), 1)) for n in named_entities(question)
               if n in question and (others := [m for m in names if m not in question and n not in m and m not in n])]
    if numbers := re.findall(r"\b\d{1,4}\b", question):
        n = rng.choice(numbers)
        options.append(("number", re.sub(rf"\b{n}\b", str(max(1, int(n) + rng.choice([-7, -3, 2, 5, 11]))), question, count=1)))
    if not re.search(r"\bnot\b|n't", question) and (aux := AUXILIARY.search(question)):
        options.append(("negation", f"{question[:aux.end()]} not{question[aux.end():]}"))
    return rng.choice(options) if options else None


def without_unanswerable_article(parts: dict, articles: dict) -> tuple[set, dict, list]:
    """The training articles whose questions include unanswerable ones, the train and dev splits of
    every set without them, and their questions (scored)."""
    squad = {split: parts["squad2_articles"][split] for split in ("train", "dev")}
    unseen = {articles[q.id] for split in squad.values() for q in split if not q.answerable}
    kept = {split: [q for name in parts for q in parts[name][split]
                    if name != "squad2_articles" or articles[q.id] not in unseen] for split in squad}
    return unseen, kept, [q for split in squad.values() for q in split if articles[q.id] in unseen]


def answerability_header(first: str) -> None:
    print(f"| {first} | ROC AUC | abstention | false abstention | answer score | abstention at <= 20% false (best threshold) |")
    print("|---|---:|---:|---:|---:|---:|")


def separation(found: list) -> tuple[float, float]:
    """How well the probabilities set unanswerable questions apart: ROC AUC, and the most
    abstention on them any threshold reaches with at most 20% false abstention."""
    auc = roc_auc_score([int(not o.answerable) for o in found], [-o.probability for o in found])
    figures = [train.scores_at(found, o.probability) for o in found]
    return auc, max(f["abstention"] for f in figures if f["false_abstention"] <= 0.2)


def answerability_line(name: str, reader, questions) -> None:
    found = train.outcomes(reader, questions)
    auc, best = separation(found)
    at = train.scores_at(found, reader.threshold)
    print(f"| {name} | {auc:.3f} | {at['abstention']:.1%} | {at['false_abstention']:.1%} | {at['answer_score']:.3f} | {best:.1%} |")


def synthetic_table(parts: dict) -> None:
    articles = article_of()
    examples = load_dataset(str(labeled_set("squad2_articles"))).examples
    index = CorpusIndex.open(corpora_for(examples) or None)
    unseen, kept, scored = without_unanswerable_article(parts, articles)
    rng = random.Random(0)
    names = collections.defaultdict(set)
    for ex in select(examples, "train"):
        names[articles[ex.id]].update(named_entities(ex.question))
    made = {}
    for split in ("train", "dev"):
        variants = []
        for ex in select(examples, split):
            if ex.answerability != "unlikely" and articles[ex.id] not in unseen and rng.random() < 0.5:
                if found := unanswerable_variant(ex.question, sorted(names[articles[ex.id]]), rng):
                    variants.append(dspy.Example(id=f"{ex.id}-{found[0]}", question=found[1], answer="",
                                                 answerability="unlikely").with_inputs("question"))
        made[split] = read_questions(variants, index)
    print(f"synthetic: {len(made['train'])} train, {len(made['dev'])} dev; held out: {sorted(unseen)}\n")
    answerability_header("trained on")
    answerability_line("real questions", train.fit_reader(kept["train"], kept["dev"], 0.15), scored)
    answerability_line("real + synthetic unanswerable", train.fit_reader(kept["train"] + made["train"],
                                                                         kept["dev"] + made["dev"], 0.15), scored)


ADDED = ("question_bigrams_in_sentence", "question_bigrams_in_window", "left_three_in_question",
         "right_three_in_question", "nearest_in_sentence", "best_window", "window_gap",
         "class_shared", "class_same", "class_unknown")
"""The neighbourhood and noun-class features tried at 086e802 (`learned_reader/neighbours.py`,
`nouns.py`, since taken back): `calibration` scores the reader with and without them when run
there; here, where the reader has none of them, both of its rows are the shipped reader."""


def without_added_features(questions) -> None:
    """Each row's features without `ADDED` and the noun-class pairs."""
    for q in questions:
        for r in q.rows:
            r.features = {n: v for n, v in r.features.items() if n not in ADDED and not n.startswith("lex:class:")}


def with_and_without_added(questions):
    """Name the reader's features, then strip `ADDED` from the questions' rows and name the rest:
    the tables fit and score under each in turn (`train.FEATURES` set for each)."""
    shipped = list(train.FEATURES)
    yield "the reader's"
    without_added_features(questions)
    train.FEATURES = [n for n in shipped if n not in ADDED]
    yield "without the added ones"


def held_out_outcomes(articles: dict, squad: list, others: list) -> list:
    """Each training article's questions as a reader trained without that article reads them:
    what the reader's scores look like on an article it never read."""
    found = []
    for trained, own in held_out_folds(articles, squad, others):
        reader = train.ReaderModel(format_version=train.FORMAT_VERSION, ranker=train.fit_ranker(trained),
                                   answerability=train.fit_answerability(trained), threshold=0.0)
        found += train.outcomes(reader, own)
    return found


def calibration_table(parts: dict) -> None:
    """The threshold chosen on the dev split (questions of the articles the ranker trained on)
    against one chosen on held-out articles' questions, each scored both ways; with the reader's
    features and without `ADDED`."""
    articles, squad, others = training_questions(parts)
    dev = [q for name in parts for q in parts[name]["dev"]]
    trained = [q for name in parts for q in parts[name]["train"]]
    print("| features | threshold chosen on | threshold | dev: abstention, false abstention, answer score "
          "| held-out articles: abstention, false abstention, answer score |\n|---|---|---:|---|---|")
    for name in with_and_without_added(squad + others + dev + trained):
        reader = train.fit_reader(trained, dev, 0.15)
        on_dev = train.outcomes(reader, dev)
        held_out = held_out_outcomes(articles, squad, others)
        for chosen_on, threshold in (("dev", reader.threshold),
                                     ("held-out articles", train.choose_threshold(held_out, 0.15)[0])):
            cells = [train.scores_at(found, threshold) for found in (on_dev, held_out)]
            print(f"| {name} | {chosen_on} | {threshold:.3f} | " + " | ".join(
                f"{c['abstention']:.1%}, {c['false_abstention']:.1%}, {c['answer_score']:.3f}" for c in cells) + " |",
                flush=True)


def zelda_table(parts: dict) -> None:
    """ROC AUC and abstention at <= 20% false abstention on the one training article with
    unanswerable questions, held out: its answerability model fitted the shipped way (two folds of
    the other questions) against one fitted on the other articles' questions as rankers trained
    without each of them score them; with the reader's features and without `ADDED`."""
    articles, squad, others = training_questions(parts)
    unseen, _, _ = without_unanswerable_article(parts, articles)
    print("| features, answerability trained on | ROC AUC | abstention at <= 20% false (best threshold) |\n|---|---:|---:|")
    for name in with_and_without_added(squad + others):
        rows, labels, own = [], [], []
        for trained, held in held_out_folds(articles, squad, others):
            ranker = train.fit_ranker(trained)
            for q in held:
                for r in q.rows:
                    r.score = ranker.score(r.features)
                if articles[q.id] in unseen:
                    own.append(q)
                elif q.rows:
                    rows.append(summary_features(q.rows, q.kind))
                    labels.append(int(q.answerable and train.best_f1(train.best_span(q), q.answers) >= train.RIGHT_F1))
        shipped_way = train.fit_answerability([q for q in squad if articles[q.id] not in unseen] + others)
        for way, model in (("two folds of questions", shipped_way),
                           ("held-out articles", train.fit_linear(rows, labels, ANSWERABILITY_FEATURES))):
            auc, best = separation([train.Outcome(q.answerable, model.probability(summary_features(q.rows, q.kind))
                                                  if q.rows else 0.0, 0.0) for q in own])
            print(f"| {name}, {way} | {auc:.3f} | {best:.1%} |", flush=True)


PARSED = ["entity_exact", "inside_entity", "crosses_entity", "noun_chunk_exact", "whole_subtree", "crosses_subtree",
          "tree_distance_log", "tree_near", "head_subject", "head_object", "head_prepositional_object",
          "head_apposition", "head_modifier", "head_noun", "head_proper_noun", "head_number", "head_verb",
          "head_adjective"]
"""Features of a candidate in its sentence's dependency parse and named-entity tags."""
HEAD_ROLES = {"head_subject": ("nsubj", "nsubjpass"), "head_object": ("dobj", "attr", "oprd"),
              "head_prepositional_object": ("pobj",), "head_apposition": ("appos",),
              "head_modifier": ("compound", "amod", "nmod", "poss")}
HEAD_TAGS = {"head_noun": ("NOUN",), "head_proper_noun": ("PROPN",), "head_number": ("NUM",),
             "head_verb": ("VERB", "AUX"), "head_adjective": ("ADJ",)}


def without_article(start: int, span) -> int:
    """Where a span starts once a leading "the" or "a" is left out: candidates never open with one."""
    return span[1].idx if len(span) > 1 and span[0].pos_ == "DET" else start


def tree_path(a, b) -> tuple[list, list]:
    """The tokens from `a` up to the lowest head it shares with `b`, and from `b` up to it."""
    up_a, up_b = [a, *a.ancestors], [b, *b.ancestors]
    at = {t.i: k for k, t in enumerate(up_b)}
    for k, t in enumerate(up_a):
        if t.i in at:
            return up_a[:k], up_b[:at[t.i]]
    return up_a, up_b


def add_parsed_features(q: train.Question, docs: dict) -> None:
    """Each row's `PARSED` features, and lexical ones crossed with the question's asking phrase:
    the entity tag of a candidate that is one, the role of its head, the preposition it follows,
    and the labels on the way up from it to the nearest word of the question."""
    wh, noun, asked = wh_key(q.question), asked_noun(q.question), stems_of(q.question)
    for r in q.rows:
        doc, (start, end), f = docs[r.sentence.text], (r.candidate.start, r.candidate.end), r.features
        tokens = [t for t in doc if t.idx < end and t.idx + len(t.text) > start]
        if not tokens:
            continue
        inside = {t.i for t in tokens}
        head = next((t for t in tokens if t.head.i not in inside or t.head.i == t.i), tokens[0])
        for ent in doc.ents:
            if start in (ent.start_char, without_article(ent.start_char, ent)) and end == ent.end_char:
                f.update({"entity_exact": 1.0, f"lex:{wh}|entity={ent.label_}": 1.0})
                if noun:
                    f[f"lex:head={noun}|entity={ent.label_}"] = 1.0
            elif ent.start_char <= start and end <= ent.end_char:
                f.update({"inside_entity": 1.0, f"lex:{wh}|inside={ent.label_}": 1.0})
            elif start < ent.end_char and ent.start_char < end:
                f["crosses_entity"] = 1.0
        if any(start in (c.start_char, without_article(c.start_char, c)) and end == c.end_char for c in doc.noun_chunks):
            f["noun_chunk_exact"] = 1.0
        subtree = {t.i for t in head.subtree}
        outside = [doc[i] for i in subtree - inside]
        f["whole_subtree"] = float(inside <= subtree and all(t.pos_ == "DET" or t.is_punct for t in outside))
        f["crosses_subtree"] = float(not inside <= subtree)
        anchors = [t for t in doc if t.i not in inside and not t.is_stop and stem(fold_accents(t.text)) in asked]
        paths = [tree_path(head, a) for a in anchors]
        nearest = min(paths, key=lambda p: len(p[0]) + len(p[1]), default=None)
        distance = len(nearest[0]) + len(nearest[1]) if nearest else 30
        f.update({"tree_distance_log": math.log1p(distance), "tree_near": float(distance <= 2)})
        if nearest:
            f[f"lex:{wh}|path={'^'.join(t.dep_ for t in nearest[0][:3])}|{len(nearest[1])}"] = 1.0
        f.update({name: float(head.dep_ in roles) for name, roles in HEAD_ROLES.items()})
        f.update({name: float(head.pos_ in tags) for name, tags in HEAD_TAGS.items()})
        f[f"lex:{wh}|role={head.dep_}"] = 1.0
        if head.dep_ == "pobj":
            f[f"lex:{wh}|after={head.head.lemma_.lower()}"] = 1.0


def parsed_docs(texts) -> dict:
    """Each sentence's spaCy parse, by its text. The pipeline is an installed spaCy package:
    `en_core_web_sm` unless another is named on the command line after the mode."""
    import spacy
    nlp = spacy.load(sys.argv[2] if len(sys.argv) > 2 else "en_core_web_sm")
    texts = sorted(set(texts))
    return dict(zip(texts, nlp.pipe(texts, batch_size=256)))


def together_table(parts: dict) -> None:
    """Every ranker lever that can be computed here at once: the shipped features, the seven
    neighbourhood features, the parse's features, then boosted trees that read them and the
    linear ranker's score (as `stacked`). Leave-one-article-out top-1 F1, with and without the
    gold's sentences given (`sentences`)."""
    articles, squad, others = training_questions(parts)
    docs = parsed_docs(r.sentence.text for q in squad + others for r in q.rows)
    for q in squad + others:
        add_extra_features(q)
        add_parsed_features(q, docs)
    shipped = list(train.FEATURES)
    train.FEATURES = shipped + EXTRA + PARSED
    found = collections.defaultdict(list)
    for trained, own in held_out_folds(articles, squad, others):
        scored = [q for q in own if q.answerable and q.rows]
        ranker = train.fit_ranker(trained)
        stacked = cross_fitted_trees(trained)

        def trees(q, rows=None):
            rows = rows or q.rows
            sub = train.Question(q.id, q.question, q.facts, q.answers, rows)
            return rows[int(np.argmax(stacked.decision_function(tree_inputs(sub, ranker))))]

        def given(pick):
            def pick_given(q):
                holding = gold_sentence_rows(q)
                return pick(q, holding) if holding else pick(q)
            return pick_given

        linear = lambda q, rows=None: max(rows or q.rows, key=lambda r: ranker.score(r.features))
        for name, pick in {"all features, linear ranker": linear, "all features, trees + ranker's score": trees,
                           "all features, linear, gold's sentences given": given(linear),
                           "all features, trees, gold's sentences given": given(trees)}.items():
            found[name].append(top_one(pick, scored))
    print(RANKER_HEADER)
    for name, scores in found.items():
        ranker_line(name, scores)


def parsed_table(parts: dict) -> None:
    """Leave-one-article-out top-1 F1 with the parse's features beside the shipped ones (and
    without the paths' labels). The pipeline is an installed spaCy package: `en_core_web_sm`
    unless another is named after the mode."""
    articles, squad, others = training_questions(parts)
    docs = parsed_docs(r.sentence.text for q in squad + others for r in q.rows)
    shipped = list(train.FEATURES)

    def row(name):
        ranker_line(name, [top_one(by_ranker(train.fit_ranker(trained)), [q for q in own if q.answerable and q.rows])
                           for trained, own in held_out_folds(articles, squad, others)])

    print(RANKER_HEADER)
    row("shipped features")
    for q in squad + others:
        add_parsed_features(q, docs)
    train.FEATURES = shipped + PARSED
    row("+ parsed features")
    for q in squad + others:
        for r in q.rows:
            r.features = {n: v for n, v in r.features.items() if "|path=" not in n}
    row("+ parsed features, no paths")


if __name__ == "__main__":
    {"ranker": ranker_table, "synthetic": synthetic_table, "losses": loss_table,
     "stacked": stacked_table, "coverage": coverage_table, "calibration": calibration_table,
     "zelda": zelda_table, "parsed": parsed_table, "sentences": sentence_table, "trimmed": trimmed_table,
     "together": together_table}[sys.argv[1]](
        cached_questions())
