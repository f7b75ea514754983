/* Predict mode (gradvizPredict(root), after gradvizPlayer(root)): a "predict" button in the player's
   bar; while it is on, before a backward step is shown the learner types what its node sends to each
   input, and the page checks it against the recorded Trace (the data's "predict", player/predict.py)
   with the notebook checkers' tolerances and their grid: your answer, the engine's, the difference
   coloured only where wrong. The step is shown once the answer is right, or when the learner asks. */
(function () {
  "use strict";
  if (window.gradvizPredict) return;

  function numbers(text) {
    var found = String(text).match(/[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf(?:inity)?|nan/gi) || [];
    return found.map(function (s) {
      var t = s.toLowerCase();
      return t.indexOf("nan") >= 0 ? NaN : t.indexOf("inf") >= 0 ? (t[0] === "-" ? -Infinity : Infinity) : parseFloat(s);
    });
  }
  function close(a, b, rtol, atol) {
    if (isNaN(a) && isNaN(b)) return true;
    if (a === b) return true;
    return Math.abs(a - b) <= atol + rtol * Math.abs(b);
  }
  function shapeText(shape) { return "(" + shape.join(", ") + (shape.length === 1 ? ",)" : ")"); }
  function fmt(v) {
    if (!isFinite(v)) return String(v);
    var a = Math.abs(v);
    return a !== 0 && (a < 1e-3 || a >= 1e4) ? v.toExponential(3) : String(Math.round(v * 1e4) / 1e4);
  }
  function esc(s) { return String(s).replace(/[&<>"]/g, function (c) { return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]; }); }
  // a grid as the checkers draw one: rows of the last axis, the wrong cells marked
  function grid(values, shape, wrong) {
    var cols = shape.length ? shape[shape.length - 1] : 1, rows = Math.max(1, values.length / cols), out = '<table class="gv-grid">';
    for (var r = 0; r < rows; r++) {
      out += "<tr>";
      for (var c = 0; c < cols; c++) {
        var i = r * cols + c;
        out += '<td' + (wrong && wrong[i] ? ' class="gv-ask-wrong"' : "") + ">" + fmt(values[i]) + "</td>";
      }
      out += "</tr>";
    }
    return out + "</table>";
  }
  // the verdict on one typed answer: {ok, html}
  function judge(text, want, rtol, atol) {
    var got = numbers(text), n = want.values.length, size = want.shape.length ? "shape " + shapeText(want.shape) : "one number";
    if (!got.length) return { ok: false, html: "no answer yet: type " + (n === 1 ? "a number" : n + " numbers") };
    if (got.length !== n) {
      return { ok: false, html: "your answer has " + got.length + " number" + (got.length === 1 ? "" : "s") +
        "; the engine's has " + size + " (" + n + " numbers): a gradient always has the shape of its tensor" };
    }
    var wrong = want.values.map(function (v, i) { return !close(got[i], v, rtol, atol); });
    var count = wrong.filter(Boolean).length;
    if (!count) return { ok: true, html: "right (" + (n === 1 ? fmt(want.values[0]) : "all " + n + " values") + ")" };
    var diff = got.map(function (g, i) { return wrong[i] ? g - want.values[i] : 0; });
    return { ok: false, html: (n === 1 ? "differs" : count + " of " + n + " values differ") +
      '<table class="gv-vjp-table"><tr><th>your answer</th><th>the engine</th><th>difference (0 where right)</th></tr><tr><td>' +
      grid(got, want.shape) + "</td><td>" + grid(want.values, want.shape) + "</td><td>" + grid(diff, want.shape, wrong) +
      "</td></tr></table>" };
  }

  function gradvizPredict(root) {
    var api = root && root.__gv, source = root && root.querySelector("script.gv-data");
    if (!api || !source || root.__gvPredict) return;
    var all = JSON.parse(source.textContent), data = all.predict || {}, rtol = all.rtol, atol = all.atol;
    if (!Object.keys(data).length) return;
    root.__gvPredict = true;
    var on = false, done = {};
    var toggle = document.createElement("button");
    toggle.type = "button";
    toggle.className = "gv-predict";
    toggle.textContent = "predict";
    toggle.title = "Before each backward step, type what its node sends, and check it";
    toggle.setAttribute("aria-pressed", "false");
    root.querySelector(".gv-bar").appendChild(toggle);
    var box = document.createElement("div");
    box.className = "gv-ask";
    box.hidden = true;
    box.setAttribute("role", "form");
    var panel = root.querySelector(".gv-panel");
    panel.parentNode.insertBefore(box, panel);
    toggle.addEventListener("click", function () {
      on = !on;
      toggle.setAttribute("aria-pressed", on ? "true" : "false");
      root.classList.toggle("gv-predicting", on);
      if (!on) box.hidden = true;
    });

    function ask(k, want) {
      var html = '<div class="gv-ask-title">Predict step ' + k + ": what does <b>" + esc(want.node) + "</b> send?</div>";
      want.sends.forEach(function (s, i) {
        html += '<label class="gv-ask-row">to <b>' + esc(s.to) + "</b>, " + (s.shape.length ? "shape " + shapeText(s.shape) : "one number") +
          ' <input type="text" class="gv-ask-in" data-i="' + i + '" spellcheck="false" autocomplete="off" ' +
          'placeholder="' + (s.values.length === 1 ? "a number" : "numbers, row by row") + '"></label>' +
          '<div class="gv-ask-verdict" data-i="' + i + '" aria-live="polite"></div>';
      });
      html += '<div class="gv-ask-buttons"><button type="button" class="gv-ask-check">Check</button>' +
        '<button type="button" class="gv-ask-show">Show the step</button></div>';
      box.innerHTML = html;
      box.dataset.step = k;
      box.hidden = false;
      var first = box.querySelector("input");
      if (first) first.focus();
      function check() {
        var right = 0;
        want.sends.forEach(function (s, i) {
          var verdict = judge(box.querySelector('.gv-ask-in[data-i="' + i + '"]').value, s, rtol, atol);
          var el = box.querySelector('.gv-ask-verdict[data-i="' + i + '"]');
          el.className = "gv-ask-verdict " + (verdict.ok ? "gv-ask-right" : "gv-ask-no");
          el.innerHTML = (verdict.ok ? "✓ " : "✗ ") + verdict.html;
          if (verdict.ok) right++;
        });
        if (right === want.sends.length) {
          done[k] = true;
          var show = box.querySelector(".gv-ask-show");
          show.textContent = "Next ▶";
          show.focus();
        }
      }
      box.querySelector(".gv-ask-check").addEventListener("click", check);
      box.querySelectorAll("input").forEach(function (el) {
        el.addEventListener("keydown", function (ev) { ev.stopPropagation(); if (ev.key === "Enter") check(); });
      });
      box.querySelector(".gv-ask-show").addEventListener("click", function () {
        done[k] = true;
        box.hidden = true;
        api.next();
      });
    }
    api.before(function (f) {
      if (!on || !f || !f.k || f.k[0] !== f.k[1] || !/^backward/.test(f.t || "")) return true;
      var k = String(f.k[0]), want = data[k];
      if (!want || done[k]) { box.hidden = true; return true; }
      api.pause();
      if (box.hidden || box.dataset.step !== k) ask(k, want);   // asked already: keep what was typed
      return false;
    });
  }
  window.gradvizPredict = gradvizPredict;
})();
