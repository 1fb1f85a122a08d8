"""Write the reader's noun classes from WordNet 3.0: what kind of thing each English noun names.

    apt-get install wordnet-base   # Debian's WordNet 3.0 database, in /usr/share/wordnet
    python -m deltaseek.optimize.convert_wordnet [--source DIR] [--out FILE]

Reads index.noun (each noun's senses, most frequent first) and data.noun (each sense's
lexicographer file: noun.person, noun.location, noun.time, ...) and writes
programs/compiled/noun_classes.json: every one-word noun with the classes of its senses, most
frequent first, at most `MOST_SENSES` of them. The reader compares the class of the noun a
question asks for ("In what decade ...": time) with the class of a candidate's last word. Running
it again on the same database rewrites the file byte for byte. WordNet's license is in
programs/compiled/WordNet_LICENSE.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from deltaseek.files import write_text_atomically
from deltaseek.optimize.convert_musique import PROJECT_ROOT

DEFAULT_SOURCE = Path("/usr/share/wordnet")
DEFAULT_OUT = PROJECT_ROOT / "programs" / "compiled" / "noun_classes.json"
MOST_SENSES = 3
"""Classes kept per noun: rarer senses ("einstein", a unit of light) would only blur the common ones."""
NOUN_FILES = ("tops", "act", "animal", "artifact", "attribute", "body", "cognition", "communication", "event",
              "feeling", "food", "group", "location", "motive", "object", "person", "phenomenon", "plant",
              "possession", "process", "quantity", "relation", "shape", "state", "substance", "time")
"""WordNet's noun lexicographer files 03 to 28, in number order (lexnames(5WN))."""
FIRST_NOUN_FILE = 3


def sense_files(data_noun: Path) -> dict[str, int]:
    """Each noun synset's offset with its lexicographer file number (the second field of its line)."""
    found = {}
    with data_noun.open(encoding="latin-1") as lines:
        for line in lines:
            if not line.startswith(" "):  # the license header's lines open with two spaces
                offset, number = line.split(" ", 2)[:2]
                found[offset] = int(number)
    return found


def noun_classes(source: Path = DEFAULT_SOURCE) -> dict[str, str]:
    """Every one-word noun with its senses' classes as letters ("a" for tops ... "z" for time)."""
    files = sense_files(source / "data.noun")
    classes = {}
    with (source / "index.noun").open(encoding="latin-1") as lines:
        for line in lines:
            if line.startswith(" "):
                continue
            # lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt synset_offset...
            fields = line.split()
            lemma, senses, pointers = fields[0], int(fields[2]), int(fields[3])
            if "_" in lemma:
                continue
            letters = ""
            for offset in fields[6 + pointers:6 + pointers + senses]:
                letter = chr(ord("a") + files[offset] - FIRST_NOUN_FILE)
                if letter not in letters:
                    letters += letter
            classes[lemma] = letters[:MOST_SENSES]
    return classes


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE,
                        help="folder holding WordNet 3.0's index.noun and data.noun")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the noun classes file to write")
    args = parser.parse_args(argv)
    if not (args.source / "index.noun").is_file():
        parser.error(f"{args.source / 'index.noun'}: no WordNet noun index there (apt-get install wordnet-base)")
    classes = noun_classes(args.source)
    data = {"source": "WordNet 3.0, noun lexicographer files; license in WordNet_LICENSE",
            "classes": list(NOUN_FILES), "nouns": classes}
    write_text_atomically(args.out, json.dumps(data, separators=(",", ":"), sort_keys=True) + "\n", mode=0o644)
    print(f"wrote {args.out} ({len(classes)} nouns)")


if __name__ == "__main__":
    main()
