/*
 * render_html.c — the self-contained HTML heatmap page
 * (attend_render_heatmap_html): tokens as buttons, the SVG heatmap of
 * render_svg.c, the weights as JSON and a small script. Conventions: the top
 * of render.c.
 *
 * Dimension letters: T output (target) steps, S source positions; w [T,S].
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/render_internal.h"

/* ------------------------------------------------------------ HTML heatmap */

/* The page is written as polyglot XHTML (it parses the same as HTML and as
 * XML), and the script uses neither '<' nor '&', so it needs no CDATA. */
static const char html_css[] =
    "body{font:15px/1.45 system-ui,\"Segoe UI\",Roboto,\"DejaVu Sans\",Helvetica,Arial,sans-serif;"
    "color:#111;background:#fff;margin:24px;max-width:1100px}\n"
    "h1{font-size:20px;margin:0 0 4px}\n"
    ".hint{color:#555;margin:0 0 12px}\n"
    ".label{font-size:12px;text-transform:uppercase;letter-spacing:.06em;color:#555;margin:14px 0 4px}\n"
    ".row{display:flex;flex-wrap:wrap;gap:6px}\n"
    ".tok{display:inline-flex;flex-direction:column;align-items:center;min-width:30px;padding:3px 8px;"
    "border:1px solid #c3cfdd;border-radius:4px;font:15px/1.4 \"DejaVu Sans Mono\",Menlo,Consolas,monospace;"
    "white-space:pre;color:#111;background:#fff}\n"
    ".src small{font-size:11px;line-height:1.2;opacity:.85;min-height:13px}\n"
    "button.tok{background:#f3f5f8;cursor:pointer}\n"
    "button.tok:hover{border-color:#08306b}\n"
    "button.tok:focus{outline:3px solid #d95f02;outline-offset:1px}\n"
    "button.tok.on{background:#08306b;color:#fff;border-color:#08306b}\n"
    ".sel{margin:14px 0 0;font-size:13px;color:#333}\n"
    "#selected{font-family:\"DejaVu Sans Mono\",Menlo,Consolas,monospace;word-break:break-all}\n"
    "figure{margin:18px 0 0;overflow-x:auto}\n"
    "svg rect.cell:hover{stroke:#d95f02;stroke-width:2px}\n";

static const char html_js[] =
    "(function () {\n"
    "  \"use strict\";\n"
    "  var W = JSON.parse(document.getElementById(\"attend-weights\").textContent);\n"
    "  var T = W.length;\n"
    "  var srcs = document.querySelectorAll(\"#attend-src .tok\");\n"
    "  var outs = document.querySelectorAll(\"#attend-out .tok\");\n"
    "  var sel = document.getElementById(\"selected\");\n"
    "  var hl = document.getElementById(\"attend-rowhl\");\n"
    "  function fmt(w) { return w.toFixed(6); }\n"
    "  function select(t) {\n"
    "    if (!(t >= 0) || !(T > t)) return;\n"
    "    var row = W[t];\n"
    "    Array.prototype.forEach.call(srcs, function (el, s) {\n"
    "      var w = row[s];\n"
    "      el.style.backgroundColor = \"rgba(8,48,107,\" + w + \")\";\n"
    "      el.style.color = w > 0.5 ? \"#fff\" : \"#111\";\n"
    "      el.setAttribute(\"data-w\", fmt(w));\n"
    "      el.title = \"w=\" + fmt(w);\n"
    "      el.querySelector(\"small\").textContent = w.toFixed(2);\n"
    "    });\n"
    "    Array.prototype.forEach.call(outs, function (el, u) {\n"
    "      el.classList.toggle(\"on\", u === t);\n"
    "      el.setAttribute(\"aria-pressed\", u === t ? \"true\" : \"false\");\n"
    "    });\n"
    "    sel.textContent = \"t=\" + t + \" w=\" + row.map(fmt).join(\" \");\n"
    "    if (hl) {\n"
    "      hl.setAttribute(\"y\", String(Number(hl.getAttribute(\"data-top\")) +\n"
    "                                   t * Number(hl.getAttribute(\"data-cell\"))));\n"
    "      hl.setAttribute(\"visibility\", \"visible\");\n"
    "    }\n"
    "  }\n"
    "  Array.prototype.forEach.call(outs, function (el, t) {\n"
    "    el.addEventListener(\"mouseenter\", function () { select(t); });\n"
    "    el.addEventListener(\"focus\", function () { select(t); });\n"
    "    el.addEventListener(\"click\", function () { select(t); });\n"
    "    el.addEventListener(\"keydown\", function (e) {\n"
    "      var k = e.key === \"ArrowRight\" ? 1 : (e.key === \"ArrowLeft\" ? -1 : 0);\n"
    "      if (k === 0) return;\n"
    "      var u = t + k;\n"
    "      if (u >= 0) { if (T > u) { outs[u].focus(); e.preventDefault(); } }\n"
    "    });\n"
    "  });\n"
    "  Array.prototype.forEach.call(document.querySelectorAll(\"rect.cell\"), function (el) {\n"
    "    el.addEventListener(\"mouseenter\", function () {\n"
    "      select(Number(el.getAttribute(\"data-t\")));\n"
    "    });\n"
    "  });\n"
    "  function fromHash() {\n"
    "    var m = /^#t=([0-9]+)$/.exec(window.location.hash);\n"
    "    if (m) select(parseInt(m[1], 10));\n"
    "  }\n"
    "  window.addEventListener(\"hashchange\", fromHash);\n"
    "  fromHash();\n"
    "})();\n";

attend_status attend_render_heatmap_html(char **out, const attend_real *w, int T, int S,
                                         const char *const *src_tokens, const char *const *out_tokens,
                                         const char *title, attend_error *err) {
    TRY(at_render_check_heatmap(out, w, T, S, src_tokens, out_tokens, title, "attend_render_heatmap_html", err));
    char buf[16];
    const char *heading = title ? title : "Attention alignment";
    at_sbuf b = {0};
    at_sb_puts(&b, "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\" xml:lang=\"en\">\n"
                "<head>\n<meta charset=\"utf-8\"/>\n"
                "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n<title>");
    at_render_xml(&b, heading, 0);
    at_sb_puts(&b, "</title>\n<style>\n");
    at_sb_puts(&b, html_css);
    at_sb_puts(&b, "</style>\n</head>\n<body>\n<h1>");
    at_render_xml(&b, heading, 0);
    at_sb_printf(&b, "</h1>\n<p class=\"hint\">%d output steps over %d source tokens. Hover an output token, or "
                  "focus one with Tab (arrow keys move), to shade each source token by its weight.</p>\n",
              T, S);

    at_sb_puts(&b, "<div class=\"label\" id=\"attend-src-label\">Source</div>\n"
                "<div class=\"row\" id=\"attend-src\" aria-labelledby=\"attend-src-label\">\n");
    for (int s = 0; s < S; s++) {
        at_sb_printf(&b, "<span class=\"tok src\" data-s=\"%d\">", s);
        at_render_xml(&b, at_render_label_of(src_tokens, s, buf), 0);
        at_sb_puts(&b, "<small></small></span>\n");
    }
    at_sb_puts(&b, "</div>\n<div class=\"label\" id=\"attend-out-label\">Output</div>\n"
                "<div class=\"row\" id=\"attend-out\" aria-labelledby=\"attend-out-label\">\n");
    for (int t = 0; t < T; t++) {
        at_sb_printf(&b, "<button type=\"button\" class=\"tok out\" data-t=\"%d\" aria-pressed=\"false\">", t);
        at_render_xml(&b, at_render_label_of(out_tokens, t, buf), 0);
        at_sb_puts(&b, "</button>\n");
    }
    at_sb_puts(&b, "</div>\n<p class=\"sel\" aria-live=\"polite\">Selected: <span id=\"selected\"></span></p>\n"
                "<figure>\n");
    at_render_heatmap_svg(&b, w, T, S, src_tokens, out_tokens, NULL, 1);
    at_sb_puts(&b, "</figure>\n<script type=\"application/json\" id=\"attend-weights\">[");
    for (int t = 0; t < T; t++) {
        at_sb_puts(&b, t ? ",\n[" : "\n[");
        for (int s = 0; s < S; s++) {
            if (s) at_sb_put(&b, ",", 1);
            at_sb_f(&b, at_render_weight_at(w, S, t, s), 6);
        }
        at_sb_put(&b, "]", 1);
    }
    at_sb_puts(&b, "]</script>\n<script>\n");
    at_sb_puts(&b, html_js);
    at_sb_puts(&b, "</script>\n</body>\n</html>\n");
    return at_sb_finish(&b, out, "attend_render_heatmap_html", err);
}
