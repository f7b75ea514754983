/* gradviz player: steps through an animation's frames on an inline SVG.
   A frame holds only state changes (id -> state, shown as class gv-<state>), texts
   for the edges gradient flows along, and the step panel's HTML. No network access. */
(function () {
  "use strict";
  if (window.gradvizPlayer) return;
  var SVGNS = "http://www.w3.org/2000/svg";
  var players = [];

  function gradvizPlayer(root) {
    if (!root || root.__gv) return root && root.__gv;
    var data = JSON.parse(root.querySelector("script.gv-data").textContent);
    var frames = data.frames, mid = data.mid || {}, base = data.interval || 1200;
    var svg = root.querySelector(".gv-stage svg");
    var els = {};
    Array.prototype.forEach.call(svg.querySelectorAll("g.node[id], g.edge[id]"), function (g) {
      els[g.id] = g;
      // the server drew frame 0 for readers without script; start from a clean slate
      Array.prototype.slice.call(g.classList).forEach(function (c) { if (c.indexOf("gv-") === 0) g.classList.remove(c); });
    });
    var graph = svg.querySelector("g.graph") || svg;
    var old = graph.querySelector("g.gv-labels");
    if (old) old.parentNode.removeChild(old);
    var labels = document.createElementNS(SVGNS, "g");
    labels.setAttribute("class", "gv-labels");
    graph.appendChild(labels);
    var q = function (sel) { return root.querySelector(sel); };
    var slider = q(".gv-slider"), count = q(".gv-count"), title = q(".gv-title"), text = q(".gv-text");
    var playBtn = q(".gv-play"), speed = q(".gv-speed");
    slider.max = String(Math.max(frames.length - 1, 0));
    var shown = {}, current = -1, timer = null;

    function setState(id, st) {
      var el = els[id];
      if (!el) return;
      if (shown[id]) el.classList.remove("gv-" + shown[id]);
      if (st) { el.classList.add("gv-" + st); shown[id] = st; } else { delete shown[id]; }
    }
    function stateAt(k) {
      var s = {};
      for (var i = 0; i <= k; i++) { var c = frames[i].c; for (var id in c) s[id] = c[id]; }
      return s;
    }
    function go(k) {
      if (!frames.length) return;
      k = Math.max(0, Math.min(frames.length - 1, k | 0));
      var state = stateAt(k), id;
      for (id in shown) if (!(id in state)) setState(id, null);
      for (id in state) if (shown[id] !== state[id]) setState(id, state[id]);
      while (labels.firstChild) labels.removeChild(labels.firstChild);
      var l = frames[k].l;
      for (id in l) {
        var p = mid[id];
        if (!p || !l[id]) continue;
        var t = document.createElementNS(SVGNS, "text");
        // left of the edge, unless the text would leave the drawing there (stage.label_anchor)
        var left = p[0] - 6 - 6.7 * l[id].length >= 0;
        t.setAttribute("x", String(left ? p[0] - 6 : p[0] + 6)); t.setAttribute("y", String(p[1]));
        t.setAttribute("text-anchor", left ? "end" : "start");
        t.textContent = l[id];
        labels.appendChild(t);
      }
      title.innerHTML = frames[k].t;
      text.innerHTML = frames[k].h;
      slider.value = String(k);
      count.textContent = (k + 1) + " / " + frames.length;
      root.setAttribute("data-frame", String(k));
      root.setAttribute("data-node", frames[k].n || "");
      current = k;
    }
    function next() { go(current + 1); }
    function prev() { go(current - 1); }
    function pause() {
      if (timer) clearTimeout(timer);
      timer = null;
      playBtn.textContent = "▶ Play";
      root.classList.remove("gv-playing");
    }
    function tick() {
      if (current >= frames.length - 1) { pause(); return; }
      next();
      timer = setTimeout(tick, base / parseFloat(speed.value || "1"));
    }
    function play() {
      if (timer) return;
      if (current >= frames.length - 1) go(0);
      playBtn.textContent = "❚❚ Pause";
      root.classList.add("gv-playing");
      timer = setTimeout(tick, base / parseFloat(speed.value || "1"));
    }
    function toggle() { if (timer) pause(); else play(); }

    q(".gv-next").addEventListener("click", function () { pause(); next(); });
    q(".gv-prev").addEventListener("click", function () { pause(); prev(); });
    q(".gv-first").addEventListener("click", function () { pause(); go(0); });
    playBtn.addEventListener("click", toggle);
    slider.addEventListener("input", function () { pause(); go(parseInt(slider.value, 10)); });

    var api = { go: go, next: next, prev: prev, play: play, pause: pause,
                frame: function () { return current; }, length: frames.length };
    root.__gv = api;
    players.push(root);
    go(0);
    return api;
  }

  // One keyboard listener for the page: keys go to the player holding focus, or to the
  // first player when nothing is focused (a saved HTML file has just one).
  document.addEventListener("keydown", function (ev) {
    var el = document.activeElement, root = null;
    for (var i = 0; i < players.length; i++) if (players[i].contains(el)) root = players[i];
    if (!root && (!el || el === document.body) && players.length) root = players[0];
    if (!root || !root.isConnected) return;
    var tag = ev.target && ev.target.tagName;
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return;   // the slider moves itself
    if (tag === "BUTTON" && (ev.key === " " || ev.key === "Enter")) return;  // a button clicks itself
    var api = root.__gv;
    if (ev.key === "ArrowRight") { api.pause(); api.next(); }
    else if (ev.key === "ArrowLeft") { api.pause(); api.prev(); }
    else if (ev.key === " ") api.frame() >= 0 && (root.classList.contains("gv-playing") ? api.pause() : api.play());
    else if (ev.key === "Home") { api.pause(); api.go(0); }
    else if (ev.key === "End") { api.pause(); api.go(api.length - 1); }
    else return;
    ev.preventDefault();
  });
  window.gradvizPlayer = gradvizPlayer;
})();
