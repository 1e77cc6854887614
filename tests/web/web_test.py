#!/usr/bin/python3
"""web_test.py PAGE ATTEND_CLI [LEX] [--model M] — the G2P page (tools/wasm_build.sh) in headless
Chromium, against the `attend g2p` command.

Chromium is driven over the DevTools protocol on a pipe (--remote-debugging-pipe:
no port, no network): the page is opened from a file:// URL, each word is typed
into the input (Input.insertText) and Enter pressed, and the page's DOM is read
back: the phonemes, every heatmap cell (data-w, 4 decimals), the n-best list
with its scores, the entropy, the error message, and the page's own per-word
time (performance.now() around the WebAssembly calls). Every word is compared
with `attend g2p --format jsonl --align` (greedy) and `--nbest 3` (beam 5);
the words the model cannot pronounce must show a message naming the problem.
Those comparisons run with the page's lexicon switched off; then, with it on
(the page built with LEXICON=LEX, tests/web/web_test.sh: the committed sample),
words of the lexicon must show its entries as `attend g2p --lexicon LEX` lists
them (source "lexicon", no heatmap) and other words the model's.
Then the #words= automation is checked with --dump-dom. Prints the page size
and the median per-word latency over REPEAT rounds. Exit 0 on success;
prints "SKIP: chromium not installed" when there is no browser.

--model M: the page embeds model M instead of the shipped one (built with
MODEL=M LEXICON=none: issue 27's transformer page); the command's side is
`attend g2p --no-lexicon --model M`, and the page has no lexicon.
"""
import fcntl
import json
import math
import os
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

WORDS = ["hello", "world", "speech", "attention", "Read", "xylophone", "cat", "pronunciation", "a",
         "supercalifragilistic"]
BAD = {"naïve": "does not know the letter(s) ï", "two words": "white space", "x" * 70: "at most 64"}
REPEAT = 5
# lexicon first: words of the committed sample (one entry, several, upper case) and words it lacks
LEX_WORDS = ["ai", "baton", "Financial", "minute", "aardvark", "hello"]


class Browser:
    """Chromium with the DevTools protocol on fds 3 (commands) and 4 (replies)."""

    def __init__(self, exe):
        self.profile = tempfile.mkdtemp(prefix="attend-web-")
        cmd_r, self.cmd_w = os.pipe()
        self.res_r, res_w = os.pipe()

        def fds():  # the pipes on fds 3 and 4, whatever numbers they had
            a, b = fcntl.fcntl(cmd_r, fcntl.F_DUPFD, 10), fcntl.fcntl(res_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)
        self.proc = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync",
             "--disable-background-networking", "--disable-component-update", "--disable-quic",
             "--remote-debugging-pipe", "--user-data-dir=" + self.profile, "about:blank"],
            preexec_fn=fds, pass_fds=(3, 4, cmd_r, res_w), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(cmd_r)
        os.close(res_w)
        self.buf, self.next_id, self.session = b"", 0, None

    def send(self, method, params=None, session=True, timeout=60):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self.cmd_w, json.dumps(msg).encode() + b"\0")
        end = time.time() + timeout
        while True:
            while b"\0" not in self.buf:
                left = end - time.time()
                if left <= 0 or not select.select([self.res_r], [], [], left)[0]:
                    raise TimeoutError("chromium did not answer %s in %d s" % (method, timeout))
                chunk = os.read(self.res_r, 1 << 16)
                if not chunk:
                    raise RuntimeError("chromium closed the pipe")
                self.buf += chunk
            raw, self.buf = self.buf.split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError("%s: %s" % (method, reply["error"]))
                return reply.get("result", {})

    def open(self, url):
        targets = self.send("Target.getTargets", session=False)["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.send("Target.attachToTarget", {"targetId": page["targetId"], "flatten": True},
                                 session=False)["sessionId"]
        self.send("Page.enable")
        self.send("Page.navigate", {"url": url})

    def eval(self, expr):
        r = self.send("Runtime.evaluate", {"expression": expr, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in r:
            raise RuntimeError("%s: %s" % (expr[:60], r["exceptionDetails"]))
        return r["result"].get("value")

    def close(self):
        try:
            self.send("Browser.close", session=False, timeout=10)
        except Exception:
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


READ = """(() => {
  const msg = document.getElementById('message');
  if (!msg.hidden) return {error: msg.textContent};
  const source = document.getElementById('source').getAttribute('data-source');
  if (source === 'lexicon') return {source, word: document.getElementById('shown-word').textContent,
    phonemes: document.getElementById('phonemes').textContent,
    ms: parseFloat(document.getElementById('timing').getAttribute('data-ms')),
    cells: document.querySelectorAll('#heatmap td').length,
    others: [...document.querySelectorAll('#nbest li')].map(li => li.textContent)};
  const rows = [...document.querySelectorAll('#heatmap-table tr')].slice(1);
  return {
    word: document.getElementById('shown-word').textContent,
    phonemes: document.getElementById('phonemes').textContent,
    ms: parseFloat(document.getElementById('timing').getAttribute('data-ms')),
    letters: [...document.querySelectorAll('#heatmap-table tr:first-child th')].slice(1, -1).map(e => e.textContent),
    rows: rows.map(r => [...r.querySelectorAll('td[data-w]')].map(td => parseFloat(td.getAttribute('data-w')))),
    entropy: rows.map(r => parseFloat(r.querySelector('td.ent').getAttribute('data-entropy'))),
    mean_entropy: parseFloat(document.getElementById('entropy').getAttribute('data-mean')),
    source,
    nbest: [...document.querySelectorAll('#nbest li')].map(li => [li.firstChild.textContent,
                                                                 parseFloat(li.getAttribute('data-score'))])};
})()"""


def type_word(b, word):
    b.eval("(() => { const i = document.getElementById('word'); i.value = ''; i.focus();"
           " document.getElementById('message').hidden = true; document.getElementById('result').hidden = true; })()")
    b.send("Input.insertText", {"text": word})
    for kind in ("keyDown", "keyUp"):
        b.send("Input.dispatchKeyEvent", {"type": kind, "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13,
                                          "nativeVirtualKeyCode": 13, **({"text": "\r"} if kind == "keyDown" else {})})
    return b.eval(READ)


MODEL_OPTS = []  # --model M: ["--model", M]


def cli_jsonl(cli, words, *opts):
    # the model's answers unless a lexicon is asked for (the command would
    # otherwise look words up in data/g2p/cmudict-en-us.dict where
    # tools/get_cmudict.sh fetched it)
    lexicon = [] if "--lexicon" in opts else ["--no-lexicon"]
    r = subprocess.run([cli, "g2p", "--format", "jsonl", "--align", *MODEL_OPTS, *lexicon, *opts, "--", *words],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError("attend g2p %s: %s" % (" ".join(opts), r.stderr))
    return [json.loads(line) for line in r.stdout.splitlines()]


def close(a, b, tol):
    return len(a) == len(b) and all(abs(x - y) <= tol for x, y in zip(a, b))


def main():
    args = sys.argv[1:]
    model = None
    if "--model" in args:
        i = args.index("--model")
        model = args[i + 1]
        del args[i:i + 2]
        MODEL_OPTS[:] = ["--model", model]
    page, cli = os.path.abspath(args[0]), args[1]
    lex = args[2] if len(args) > 2 else None
    exe = os.environ.get("CHROMIUM") or next((shutil.which(b) for b in ("chromium", "chromium-browser",
                                                                         "google-chrome") if shutil.which(b)), None)
    if not exe:
        print("SKIP: chromium not installed")
        return 0
    greedy = {o["word"]: o["hypotheses"][0] for o in cli_jsonl(cli, WORDS)}
    nbest = {o["word"]: o["hypotheses"] for o in cli_jsonl(cli, WORDS, "--nbest", "3")}
    if lex:  # the page keeps an entry and up to 3 others: the command's 4 best
        lexed = {o["word"]: o for o in cli_jsonl(cli, [w.lower() for w in LEX_WORDS], "--lexicon", lex,
                                                   "--nbest", "4")}
    fails = []
    b = Browser(exe)
    try:
        b.open("file://" + page)
        t_open = time.time()
        end = time.time() + 60
        while not b.eval("(() => { const e = document.getElementById('word'); return !!e && !e.disabled; })()"):
            if time.time() > end:
                raise TimeoutError("the page did not become ready: " + str(b.eval(
                    "document.getElementById('status').textContent")))
            time.sleep(0.1)
        print("page ready %.2f s after it was opened (model and lexicon loaded)" % (time.time() - t_open))
        shown = b.eval("[document.getElementById('lexicon-choice').hidden,"
                       " document.getElementById('lexicon-words').textContent]")
        if lex:
            words = len({ln.split()[0].split("(")[0].lower() for ln in open(lex, encoding="utf-8")
                         if ln.strip() and not ln.startswith(";;;")})
            if shown != [False, "{:,}".format(words)]:
                fails.append("lexicon choice: %s, want shown with %d words" % (shown, words))
        elif shown[0] is not True:
            fails.append("a page without a lexicon shows the lexicon choice: %s" % shown)
        # the model's comparisons: the lexicon switched off
        b.eval("document.getElementById('use-lexicon').checked = false")
        times = []
        for rnd in range(REPEAT):
            for w in WORDS:
                got = type_word(b, w)
                if "error" in got:
                    fails.append("%s: the page says %r" % (w, got["error"]))
                    continue
                times.append(got["ms"])
                if rnd:
                    continue
                want, wn = greedy[w], nbest[w]
                cells = sum(len(r) for r in got["rows"])
                print("%-22s %-32s %2d x %2d cells, entropy %.3f, n-best %s" % (
                    w, got["phonemes"], len(got["rows"]), len(got["letters"]), got["mean_entropy"],
                    " | ".join("%s %.4f" % (p, s) for p, s in got["nbest"])))
                if got["phonemes"] != want["phonemes"]:
                    fails.append("%s: page %r, attend g2p %r" % (w, got["phonemes"], want["phonemes"]))
                if got["letters"] != list(w.lower()):
                    fails.append("%s: heatmap columns %s" % (w, got["letters"]))
                if len(got["rows"]) != len(want["alignment"]) or not all(
                        close(r, c, 1.01e-4) for r, c in zip(got["rows"], want["alignment"])):
                    fails.append("%s: heatmap cells differ from attend g2p --align" % w)
                if cells != len(want["phonemes"].split()) * len(w):
                    fails.append("%s: %d heatmap cells" % (w, cells))
                if [p for p, _ in got["nbest"]] != [h["phonemes"] for h in wn] or not close(
                        [s for _, s in got["nbest"]], [h["score"] for h in wn], 1.01e-4):
                    fails.append("%s: n-best %s, attend g2p --nbest 3 %s" % (
                        w, got["nbest"], [(h["phonemes"], h["score"]) for h in wn]))
                ent = [-sum(x * math.log(x) for x in row if x > 0) for row in want["alignment"]]
                # the command prints weights to 4 decimals: the entropy from them is good to ~1e-2
                if not close(got["entropy"], ent, 1e-2):
                    fails.append("%s: entropy %s, from the command's weights %s" % (w, got["entropy"], ent))
        for w, why in BAD.items():
            got = type_word(b, w)
            print("%-22s -> %s" % (w[:22], got.get("error")))
            if "error" not in got or why not in got["error"]:
                fails.append("%r: expected a message containing %r, got %r" % (w, why, got))
        # after a bad word a good one works again
        if type_word(b, "cat").get("phonemes") != greedy["cat"]["phonemes"]:
            fails.append("cat after the bad words: wrong")
        if lex:
            b.eval("document.getElementById('use-lexicon').checked = true")
            for w in LEX_WORDS:
                got, want = type_word(b, w), lexed[w.lower()]
                hyps = [h["phonemes"] for h in want["hypotheses"]]
                print("%-22s %-8s %-24s %.2f ms" % (w, got.get("source"), got.get("phonemes"), got.get("ms", -1)))
                if got.get("source") != want["source"]:
                    fails.append("%s: source %r, attend g2p --lexicon %r" % (w, got.get("source"), want["source"]))
                elif want["source"] == "lexicon":
                    if [got["phonemes"]] + got["others"] != hyps:
                        fails.append("%s: page %r + %r, lexicon %r" % (w, got["phonemes"], got["others"], hyps))
                    if got["cells"]:
                        fails.append("%s: a lexicon entry with a heatmap" % w)
                elif got.get("phonemes") != cli_jsonl(cli, [w])[0]["hypotheses"][0]["phonemes"]:
                    fails.append("%s: not in the lexicon, page %r is not the model's" % (w, got.get("phonemes")))
            if not any(lexed[w.lower()]["source"] == "model" for w in LEX_WORDS) or \
                    not any(len(lexed[w.lower()]["hypotheses"]) > 2 for w in LEX_WORDS):
                fails.append("LEX_WORDS no longer has a model word and a word of 3+ entries in %s" % lex)
            # switched off again: the model's pronunciation of a lexicon word
            b.eval("document.getElementById('use-lexicon').checked = false")
            got = type_word(b, "ai")
            if got.get("source") != "model" or got.get("phonemes") != cli_jsonl(cli, ["ai"])[0]["hypotheses"][0][
                    "phonemes"]:
                fails.append("ai with the lexicon off: %r" % got)
    finally:
        b.close()
    # the #words= automation, read with --dump-dom. The virtual time budget
    # does not wait for the WebAssembly module, compiled off the main thread:
    # on a loaded machine the DOM can be dumped before the page has run, so
    # a dump without the runs is tried again (up to 4 dumps; each is counted)
    hello = greedy["hello"]["phonemes"] if model else "HH EH L OW"
    for attempt in range(1, 5):
        prof = tempfile.mkdtemp(prefix="attend-web-")
        try:
            dom = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                                  "--user-data-dir=" + prof, "--virtual-time-budget=10000", "--dump-dom",
                                  "file://%s#words=hello,na%%C3%%AFve" % page], capture_output=True, text=True,
                                 timeout=120).stdout
        finally:
            shutil.rmtree(prof, ignore_errors=True)
        if 'data-done="2"' in dom:
            break
        print("#words=: dump %d had not run yet (data-done=\"2\" absent): dumped again" % attempt)
    if 'data-done="2"' not in dom or hello not in dom or "does not know the letter(s) ï" not in dom:
        fails.append("#words=hello,naïve: the dumped DOM lacks the two runs (%d dumps)" % attempt)
    # the unbuilt template says how to build the page
    template = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "web", "index.html")
    prof = tempfile.mkdtemp(prefix="attend-web-")
    try:
        dom = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                              "--user-data-dir=" + prof, "--virtual-time-budget=2000", "--dump-dom",
                              "file://" + os.path.abspath(template)], capture_output=True, text=True,
                             timeout=120).stdout
    finally:
        shutil.rmtree(prof, ignore_errors=True)
    if "build the page with `sh tools/wasm_build.sh`" not in dom:
        fails.append("web/index.html opened unbuilt does not say how to build the page")
    size = os.path.getsize(page)
    med = statistics.median(times) if times else float("nan")
    print("page: %s, %d bytes (%.2f MiB)%s" % (page, size, size / 2 ** 20, ", model " + model if model else ""))
    print("per-word latency (greedy + beam 5 n-best 3 + alignments, in the page, %s): median %.2f ms, "
          "min %.2f, max %.2f over %d words" % (subprocess.run([exe, "--version"], capture_output=True,
                                                             text=True).stdout.strip(), med, min(times),
                                               max(times), len(times)))
    for f in fails:
        print("FAIL: " + f)
    print("PASS" if not fails else "%d failures" % len(fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
