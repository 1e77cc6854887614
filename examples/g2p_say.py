"""g2p_say.py — pronounce words with the shipped G2P model, from Python (the
twin of g2p_say.c). usage: python3 g2p_say.py WORD...   prints "word PH1 PH2 ..."

The words go to the model as one batch; a word with letters the model never
saw is reported on stderr and skipped (unknown="skip"), as a script should.
Run by the test python_wheel against the pip-installed package."""
import sys

import attend.g2p


def main(words):
    if not words:
        print("usage: python3 g2p_say.py WORD...", file=sys.stderr)
        return 2
    rc = 0
    for word, phonemes in zip(words, attend.g2p.pronounce(words, unknown="skip")):
        if phonemes is None:
            print("%s: letters the model does not know: not pronounced" % word, file=sys.stderr)
            rc = 1
        else:
            print(word, phonemes)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
