/* gradviz player: steps through an animation's frames on an inline SVG, with a camera.
   One script for the saved HTML player, the notebook player and the Stepper widget.
   A frame holds only state changes (id -> state, shown as class gv-<state>), texts for the edges
   gradient flows along, the step panel's HTML and a plain-text caption. No network access.
   The frames' keys and those of the data it is given are documented in gradviz/player/frames.py.

   The camera (camera.js) fits the whole graph on load; while the animation runs it moves to frame
   the frame's node with the edges gradient flows along and the nodes at their ends. Wheel/pinch
   zoom, drag pans, double-click focuses a node; any of these stops following until "follow" is
   pressed again. */
(function () {
  "use strict";
  if (window.gradvizPlayer) return;
  var SVGNS = "http://www.w3.org/2000/svg";
  var players = [];

  var Camera = window.gradvizCamera;   // camera.js, which comes first

  // Chromium re-lays out and repaints a whole <svg> when any element in it changes: on a 2,000-node
  // graph that costs tens of ms a step. The nodes and edges move into tiles, each its own <svg> of
  // the same geometry on the same canvas, in drawing order: a step repaints only the tiles it touches.
  var TILE = 96, FAR = 0.25, NUM = /-?\d*\.?\d+(?:e[-+]?\d+)?/gi;
  function tiles(svg, graph, els) {
    var run = [], made = [], c, i, tile, g, transform = graph === svg ? "" : graph.getAttribute("transform") || "";
    for (c = graph.firstElementChild; c; c = c.nextElementSibling) if (c.id && els[c.id] === c) run.push(c);
    for (i = run.length - (run.length % TILE || TILE); i >= 0; i -= TILE) {   // last tile first: each goes right after svg
      tile = document.createElementNS(SVGNS, "svg");
      tile.setAttribute("class", "gv-tile");
      ["viewBox", "width", "height"].forEach(function (a) { if (svg.hasAttribute(a)) tile.setAttribute(a, svg.getAttribute(a)); });
      tile.style.width = svg.style.width; tile.style.height = svg.style.height;
      g = document.createElementNS(SVGNS, "g");
      if (transform) g.setAttribute("transform", transform);
      run.slice(i, i + TILE).forEach(function (el) { g.appendChild(el); });
      tile.appendChild(g);
      svg.parentNode.insertBefore(tile, svg.nextSibling);
      made.push({ el: tile, members: run.slice(i, i + TILE), r: undefined, shown: true });
    }
    return made;
  }
  // the step panel changes in place: only what differs from the previous step's DOM is touched.
  // Much is shared between steps, and re-inserting a <details> element makes Chromium walk the
  // whole document (about 10 ms beside a 2,000-node graph); an unchanged one stays put.
  var parser = document.createElement("template");
  function same(a, b) { return a.nodeType === b.nodeType && a.nodeName === b.nodeName && a.namespaceURI === b.namespaceURI; }
  function update(old, neu) {
    var o = old.firstChild, n = neu.firstChild, nx, i, at;
    for (; n; n = nx) {
      nx = n.nextSibling;
      if (!o) { old.appendChild(n); continue; }
      if (!same(o, n)) { old.replaceChild(n, o); o = n.nextSibling; continue; }
      if (o.nodeType === 1) {
        for (i = o.attributes.length - 1; i >= 0; i--) if (!n.hasAttribute(o.attributes[i].name)) o.removeAttribute(o.attributes[i].name);
        for (i = 0; i < n.attributes.length; i++) {
          at = n.attributes[i];
          if (o.getAttribute(at.name) !== at.value) o.setAttribute(at.name, at.value);
        }
        update(o, n);
      } else if (o.nodeValue !== n.nodeValue) o.nodeValue = n.nodeValue;
      o = o.nextSibling;
    }
    while (o) { nx = o.nextSibling; old.removeChild(o); o = nx; }
  }
  function morph(el, html) {
    parser.innerHTML = html;
    update(el, parser.content);
  }

  // frames packed by gradviz/player/pack.py: a panel "H" is pieces of new text and (start, length)
  // stretches of the panel of frame "b", an earlier one; rebuilt once, in order, on load
  function unpack(frames) {
    for (var k = 0; k < frames.length; k++) {
      var f = frames[k], H = f.H;
      if (!H) continue;
      var base = frames[f.b].h, out = "";
      for (var i = 0; i < H.length; i++) out += typeof H[i] === "string" ? H[i] : base.substr(H[i], H[++i]);
      f.h = out;
      delete f.H; delete f.b;
    }
    return frames;
  }

  function gradvizPlayer(root, source) {
    if (!root || root.__gv) return root && root.__gv;
    var data = source || JSON.parse(root.querySelector("script.gv-data").textContent);
    var frames = unpack(data.frames || []), mid = data.mid || {}, base = data.interval || 1200;
    var zero = data.zero ? 1 : 0, remote = data.remote || null, finished = remote ? !!data.finished : true, total = data.total || frames.length;
    var stage = root.querySelector(".gv-stage"), svg = stage.querySelector("svg");
    var els = {};
    Array.prototype.forEach.call(svg.querySelectorAll("g.node[id], g.edge[id]"), function (g) {
      els[g.id] = g;
      // the server drew frame 0 for readers without script; start from a clean slate
      Array.prototype.slice.call(g.classList).forEach(function (c) { if (c.indexOf("gv-") === 0) g.classList.remove(c); });
    });
    var graph = svg.querySelector("g.graph") || svg;
    var old = graph.querySelector("g.gv-labels");
    if (old) old.parentNode.removeChild(old);
    // node and edge boxes are in the graph group's coordinates; Graphviz gives it scale + translate
    var tf = graph.getAttribute("transform") || "", sc = /scale\(([-\d.e]+)[ ,]*([-\d.e]*)\)/.exec(tf),
        tr = /translate\(([-\d.e]+)[ ,]+([-\d.e]+)\)/.exec(tf);
    var gs = sc ? [parseFloat(sc[1]), parseFloat(sc[2] || sc[1])] : [1, 1], gt = tr ? [+tr[1], +tr[2]] : [0, 0];
    var q = function (sel) { return root.querySelector(sel); };
    var slider = q(".gv-slider"), count = q(".gv-count"), title = q(".gv-title"), text = q(".gv-text");
    var live = q(".gv-live"), playBtn = q(".gv-play"), speed = q(".gv-speed"), nextBtn = q(".gv-next"),
        prevBtn = q(".gv-prev"), firstBtn = q(".gv-first"), followBtn = q(".gv-follow");
    var code = q(".gv-code"), lines = data.lines || {}, lit = null;
    var shown = {}, current = -1, timer = null, wanted = null, started = false, moved = false;   // moved: stepped since load
    var camera = Camera(stage, svg, function () { setFollow(false); });
    var tiled = tiles(svg, graph, els);
    // the gradient labels live in an overlay SVG of the same geometry: adding them leaves the big
    // SVG's layout alone
    var overlay = document.createElementNS(SVGNS, "svg");
    overlay.setAttribute("class", "gv-overlay");
    ["viewBox", "width", "height"].forEach(function (a) { overlay.setAttribute(a, svg.getAttribute(a)); });
    overlay.style.width = svg.style.width; overlay.style.height = svg.style.height;
    var labels = document.createElementNS(SVGNS, "g");
    labels.setAttribute("class", "gv-labels");
    labels.setAttribute("transform", graph.getAttribute("transform") || "");
    overlay.appendChild(labels);
    camera.canvas.appendChild(overlay);

    function setFollow(on) {
      camera.follow = on;
      if (followBtn) followBtn.setAttribute("aria-pressed", on ? "true" : "false");
    }
    // a node's or edge's box, read from its shapes' coordinates (no getBBox: that would lay the SVG
    // out in the middle of a step), in the graph group's coordinates; kept, since the layout never moves
    var boxes = {};
    function box(el) {
      if (el.id && boxes[el.id] !== undefined) return boxes[el.id];
      var b = scan(el);
      if (b) b = { x: b.x * gs[0] + gt[0], y: b.y * gs[1] + gt[1], w: b.w * gs[0], h: b.h * gs[1] };
      if (el.id) boxes[el.id] = b;
      return b;
    }
    function outline(el) {
      var s = el.querySelector("polygon, path"), v = s ? (s.getAttribute(s.localName === "path" ? "d" : "points") || "").match(NUM) : null;
      if (!v) return box(el);
      var x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
      for (var j = 0; j + 1 < v.length; j += 2) {
        var x = +v[j], y = +v[j + 1];
        if (x < x0) x0 = x; if (x > x1) x1 = x; if (y < y0) y0 = y; if (y > y1) y1 = y;
      }
      return { x: x0 * gs[0] + gt[0], y: y0 * gs[1] + gt[1], w: (x1 - x0) * gs[0], h: (y1 - y0) * gs[1] };
    }
    function scan(el) {
      var x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity, shapes = el.querySelectorAll("polygon, polyline, path, ellipse, text");
      function add(x, y) { if (x < x0) x0 = x; if (x > x1) x1 = x; if (y < y0) y0 = y; if (y > y1) y1 = y; }
      for (var i = 0; i < shapes.length; i++) {
        var s = shapes[i], tag = s.localName, num = function (a) { return parseFloat(s.getAttribute(a)) || 0; };
        if (tag === "ellipse") { add(num("cx") - num("rx"), num("cy") - num("ry")); add(num("cx") + num("rx"), num("cy") + num("ry")); }
        else if (tag === "text") {
          // monospace text: about 0.6 em a character, from the anchor; baseline to 0.8 em above
          var fs = num("font-size") || 14, w = 0.6 * fs * (s.textContent || "").length, x = num("x"), y = num("y"),
              anchor = s.getAttribute("text-anchor");
          x -= anchor === "middle" ? w / 2 : anchor === "end" ? w : 0;
          add(x, y - 0.8 * fs); add(x + w, y + 0.2 * fs);
        } else {
          // Graphviz writes absolute coordinates: points="x,y x,y" and paths of M and C commands
          var v = (s.getAttribute(tag === "path" ? "d" : "points") || "").match(NUM) || [];
          for (var j = 0; j + 1 < v.length; j += 2) add(+v[j], +v[j + 1]);
        }
      }
      return x0 <= x1 ? { x: x0, y: y0, w: x1 - x0, h: y1 - y0 } : null;
    }
    function union(a, b) {
      if (!a) return b;
      if (!b) return a;
      var x = Math.min(a.x, b.x), y = Math.min(a.y, b.y);
      return { x: x, y: y, w: Math.max(a.x + a.w, b.x + b.w) - x, h: Math.max(a.y + a.h, b.y + b.h) - y };
    }
    // only the tiles in and near the view are laid out and painted (a step then costs what the
    // view shows, not what the graph holds); the others wait with display: none
    function cull(v, z) {
      var hw = z.w / v.s, hh = z.h / v.s, x0 = v.cx - hw, x1 = v.cx + hw, y0 = v.cy - hh, y1 = v.cy + hh,
          all = camera.all, whole = x0 <= all.x && y0 <= all.y && x1 >= all.x + all.w && y1 >= all.y + all.h;
      for (var i = 0; i < tiled.length; i++) {
        var t = tiled[i];
        // a tile's extent: its shapes' outlines (text sits inside them; the half view around is margin)
        if (t.r === undefined && !whole) t.r = t.members.reduce(function (r, el) { return union(r, outline(el)); }, null);
        var show = whole || !t.r || (t.r.x <= x1 && t.r.x + t.r.w >= x0 && t.r.y <= y1 && t.r.y + t.r.h >= y0);
        if (show !== t.shown) { t.el.style.display = show ? "" : "none"; t.shown = show; }
      }
    }
    // text too small to read (under 2.5 px at the view's scale: the overview of a big graph) is not
    // laid out at all; hidden from the start (html.py hides it while the page is still being read), so
    // opening a big graph never lays out its text
    var far = true;
    stage.classList.add("gv-far");
    camera.onView = function (v, z) {
      if ((v.s < FAR) !== far) { far = !far; stage.classList.toggle("gv-far", far); }
      cull(v, z);
    };
    // what the camera frames at frame k: its node, the edges its gradient comes in on and goes out
    // along with the values written on them, and the nodes at their other ends (as much as is readable)
    function ends(edge) {
      var t = edge.querySelector("title"), m = t ? /^(.*?)->(.*)$/.exec(t.textContent) : null;
      return m ? [els[m[1]], els[m[2]]] : [];
    }
    // the overview: the whole graph, or while forward is still building it, the part drawn so far
    // (fitting nodes that are not there yet would shrink the drawn ones out of reading)
    function overview(smooth) {
      var id, r = null, hidden = false;
      for (id in shown) if (shown[id] === "hidden") { hidden = true; break; }
      if (hidden) for (id in els) if (shown[id] !== "hidden") r = union(r, box(els[id]));
      camera.fitAll(smooth, r);
    }
    // node id -> the nodes at the other ends of its edges, read once from the edges' titles
    var touching = {};
    Object.keys(els).forEach(function (id) {
      var t = els[id].querySelector(":scope > title"), m = t ? /^(.*?)->(.*)$/.exec(t.textContent) : null;
      if (!m || !els[m[1]] || !els[m[2]]) return;
      (touching[m[1]] = touching[m[1]] || []).push(m[2]);
      (touching[m[2]] = touching[m[2]] || []).push(m[1]);
    });
    // a visible note naming the nodes at the ends of the running node's edges that the view leaves
    // out (a graph too wide to show them all at a readable size)
    var offNote = document.createElement("div");
    offNote.className = "gv-offscreen";
    offNote.hidden = true;
    stage.appendChild(offNote);
    function nodeName(el) {
      var t = el.querySelectorAll("text"), first = t.length ? t[0].textContent.trim() : el.id,
          second = t.length > 1 ? t[1].textContent.trim() : "";
      return second.indexOf(" = ") > 0 ? first + " (" + second.split(" = ")[0] + ")" : first;
    }
    function noteOffscreen(id, v) {
      var r = v && camera.shows(v), off = [];
      if (r) (touching[id] || []).forEach(function (n) {
        var b = shown[n] !== "hidden" ? box(els[n]) : null;
        if (b && (b.x < r.x - 1 || b.y < r.y - 1 || b.x + b.w > r.x + r.w + 1 || b.y + b.h > r.y + r.h + 1)) off.push(nodeName(els[n]));
      });
      offNote.textContent = off.length ? "off screen: " + off.join(", ") + " (drag or zoom out to see)" : "";
      offNote.hidden = !off.length;
    }
    function aim(k, smooth) {
      if (!camera.follow || !started) { offNote.hidden = true; return; }
      var f = frames[k], node = f && f.n && els[f.n] ? box(els[f.n]) : null;
      if (!node) { offNote.hidden = true; overview(smooth); return; }
      var near = node, far, id;
      for (id in f.c) if (f.c[id] === "flowing" && els[id]) near = union(near, box(els[id]));
      for (id in f.l) if (els[id]) near = union(near, box(els[id]));
      if (labelBox) near = union(near, labelBox);
      far = near;
      for (id in f.c) if (f.c[id] === "flowing" && els[id]) ends(els[id]).forEach(function (g) { if (g) far = union(far, box(g)); });
      // first choice: every node at both ends of the running node's edges (all who sent it gradient too)
      var whole = far;
      (touching[f.n] || []).forEach(function (n) { if (shown[n] !== "hidden") whole = union(whole, box(els[n])); });
      noteOffscreen(f.n, camera.frame([whole, far, near, node], smooth));
    }
    // before the learner's first step: the whole graph where its text is readable so, else the
    // neighbourhood of the frame shown (a big graph's overview would set its text at a few px)
    function opening() {
      overview(false);
      if (camera.view().s < camera.readable && frames[current] && frames[current].n) aim(current, false);
    }
    camera.onResize = function () { if (camera.follow && moved) aim(current, false); else if (!moved) opening(); };

    function setState(id, st) {
      var el = els[id];
      if (!el) return;
      if (shown[id]) el.classList.remove("gv-" + shown[id]);
      if (st) { el.classList.add("gv-" + st); shown[id] = st; } else { delete shown[id]; }
    }
    // the learner's line that made the node at work: highlighted, and scrolled into the code box
    // (never the page) when it is out of sight
    function markLine(id) {
      if (!code) return;
      var key = id && lines[id], el = key ? code.querySelector('[data-line="' + key + '"]') : null;
      if (lit && lit !== el) lit.classList.remove("gv-current");
      lit = el;
      if (!el) return;
      el.classList.add("gv-current");
      var top = el.offsetTop, h = code.clientHeight, lh = el.offsetHeight;
      // the whole line centred in the box (a wrapped line is several rows tall; one taller than
      // the box shows its start)
      if (top < code.scrollTop || top + lh > code.scrollTop + h) code.scrollTop = Math.max(0, top - Math.max(0, (h - lh) / 2));
    }
    // an edge that has carried gradient is as thick as that gradient is large (frames.width_level)
    var thick = {};
    function setWidth(id, w) {
      var el = els[id];
      if (!el || thick[id] === w) return;
      if (thick[id] !== undefined) el.classList.remove("gv-w" + thick[id]);
      if (w === undefined) delete thick[id]; else { el.classList.add("gv-w" + w); thick[id] = w; }
    }
    function apply(k) {
      var id, c, w;
      if (k === current + 1 && current >= 0) {       // the usual step: only what changed
        c = frames[k].c;
        for (id in c) if (shown[id] !== c[id]) setState(id, c[id]);
        w = frames[k].w;
        if (w) for (id in w) setWidth(id, w[id]);
        return;
      }
      var state = {}, width = {};
      for (var i = 0; i <= k; i++) {
        c = frames[i].c; for (id in c) state[id] = c[id];
        w = frames[i].w; if (w) for (id in w) width[id] = w[id];
      }
      for (id in shown) if (!(id in state)) setState(id, null);
      for (id in state) if (shown[id] !== state[id]) setState(id, state[id]);
      for (id in thick) if (!(id in width)) setWidth(id, undefined);
      for (id in width) setWidth(id, width[id]);
    }
    var labelBox = null;       // where the labels are, for the camera (in the same terms as box())
    function drawLabels(l) {
      while (labels.firstChild) labels.removeChild(labels.firstChild);
      labelBox = null;
      for (var id in l) {
        var p = mid[id];
        if (!p || !l[id]) continue;
        var t = document.createElementNS(SVGNS, "text");
        // beside the edge where Python found room clear of the nodes (stage.place: p[2] 1 = left)
        var w = 6.7 * l[id].length, left = p.length > 2 ? p[2] === 1 : p[0] - 6 - w >= 0,
            x = left ? p[0] - 6 - w : p[0] + 6;
        labelBox = union(labelBox, { x: x * gs[0] + gt[0], y: (p[1] - 11) * gs[1] + gt[1], w: w * gs[0], h: 14 * gs[1] });
        t.setAttribute("x", String(left ? p[0] - 6 : p[0] + 6)); t.setAttribute("y", String(p[1]));
        t.setAttribute("text-anchor", left ? "end" : "start");
        t.textContent = l[id];
        labels.appendChild(t);
      }
    }
    function controls() {
      var k = current, n = finished ? frames.length : Math.max(total, frames.length);
      slider.max = String(Math.max(n - 1, 0));
      slider.value = String(k);
      // counted by phase, the same in the saved player and the Stepper: "forward 3 of 10", then
      // "backward 1 of 12"; where the data counts steps (a folded box's frame runs several), the
      // counter counts them: "backward 9–39 of 134", as the panel's title does. With `zero`, frame 0 is the moment before its phase's first step (the
      // Stepper before backward, forward mode's seed tangents) and counts as 0: "backward 0 of 12"
      var fwd = 0;
      while (fwd < frames.length && frames[fwd].t && frames[fwd].t.indexOf("forward") === 0) fwd++;
      var allForward = fwd > 0 && fwd === frames.length, zf = fwd > 0 ? zero : 0, zb = zero - zf;
      var f = frames[k], steps = data.steps;
      if (steps && f && f.k) {     // the steps the frame shows, as its panel's title counts them (frames.py "k")
        var span = f.k[0] === f.k[1] ? String(f.k[0]) : f.k[0] + "–" + f.k[1];
        count.textContent = k < fwd ? "forward " + span + " of " + steps[0] : "backward " + span + " of " + steps[1];
      } else {
        count.textContent = k < fwd ? "forward " + (k + 1 - zf) + " of " + ((allForward ? n : fwd) - zf)
                                    : "backward " + (k - fwd + 1 - zb) + " of " + (n - fwd - zb);
      }
      var atEnd = finished && k >= frames.length - 1;
      nextBtn.disabled = atEnd;
      prevBtn.disabled = k <= 0;
      if (firstBtn) firstBtn.disabled = k <= 0;
    }
    function go(k, smooth) {
      if (!frames.length) return;
      k = Math.max(0, k | 0);
      if (k > frames.length - 1) {
        if (remote && !finished) { wanted = k; remote.request(k); return; }   // Python runs the engine
        k = frames.length - 1;
      }
      wanted = null;
      apply(k);
      var f = frames[k];
      drawLabels(f.l);
      title.innerHTML = f.t;
      morph(text, f.h);
      markLine(f.n);
      if (live) live.textContent = f.s || title.textContent;
      current = k;
      root.setAttribute("data-frame", String(k));
      root.setAttribute("data-node", f.n || "");
      controls();
      if (started) { moved = true; aim(k, smooth !== false); }
      if (remote && remote.moved) remote.moved(k);
    }
    // a learner stepping a player that is partly scrolled away (a notebook) brings it into view
    function reveal() {
      var r = root.getBoundingClientRect(), top = 0, bottom = window.innerHeight;
      for (var p = root.parentElement; p && p !== document.body; p = p.parentElement) {
        var ov = getComputedStyle(p).overflowY;
        if (ov === "auto" || ov === "scroll" || ov === "hidden") {
          var pr = p.getBoundingClientRect();
          top = Math.max(top, pr.top); bottom = Math.min(bottom, pr.bottom);
        }
      }
      if (r.top < top - 1 || r.bottom > bottom + 1) {
        // a player taller than the view (stacked on a phone) that is partly in it stays put: the
        // learner has scrolled to the part they are reading, and the controls stick to the top
        if (r.height > bottom - top && r.bottom > top && r.top < bottom) return;
        try { root.scrollIntoView({ block: r.height > window.innerHeight ? "start" : "nearest", inline: "nearest" }); }
        catch (e) { root.scrollIntoView(); }
      }
    }
    function next() { reveal(); go(current + 1); }
    function prev() { reveal(); go(current - 1); }
    function pause() {
      if (timer) clearTimeout(timer);
      timer = null;
      if (playBtn) playBtn.textContent = "▶ Play";
      root.classList.remove("gv-playing");
      controls();
    }
    function tick() {
      if (finished && current >= frames.length - 1) { pause(); return; }
      next();
      timer = setTimeout(tick, base / parseFloat((speed && speed.value) || "1"));
    }
    function play() {
      if (timer) return;
      if (finished && current >= frames.length - 1) go(0);
      if (playBtn) playBtn.textContent = "❚❚ Pause";
      root.classList.add("gv-playing");
      timer = setTimeout(tick, base / parseFloat((speed && speed.value) || "1"));
    }
    function toggle() { if (timer) pause(); else play(); }
    function follow() { setFollow(true); aim(current, true); }
    function reset() {
      pause();
      setFollow(true);
      if (remote && remote.reset) { remote.reset(); return; }
      go(0);
    }
    function focusNode(g) {
      var b = box(g);
      if (!b) return;
      setFollow(false);
      camera.frame([b], true);
    }

    function on(sel, fn) { var el = q(sel); if (el) el.addEventListener("click", fn); }
    on(".gv-next", function () { pause(); next(); });
    on(".gv-prev", function () { pause(); prev(); });
    on(".gv-first", function () { pause(); go(0); });
    on(".gv-reset", reset);
    on(".gv-play", toggle);
    on(".gv-fit", function () { setFollow(false); overview(true); });
    on(".gv-follow", follow);
    on(".gv-zoom-in", function () { setFollow(false); camera.zoomAt(1.25, stage.clientWidth / 2, stage.clientHeight / 2); });
    on(".gv-zoom-out", function () { setFollow(false); camera.zoomAt(0.8, stage.clientWidth / 2, stage.clientHeight / 2); });
    slider.addEventListener("input", function () { var k = parseInt(slider.value, 10); pause(); go(k); });
    stage.addEventListener("dblclick", function (ev) {
      var g = ev.target && ev.target.closest ? ev.target.closest("g.node") : null;
      if (g) focusNode(g); else { setFollow(false); overview(true); }
    });
    root.addEventListener("pointerenter", function () { lastUsed = root; });
    root.addEventListener("pointerdown", function () { lastUsed = root; });

    var api = {
      go: go, next: next, prev: prev, play: play, pause: pause, reset: reset, follow: follow,
      frame: function () { return current; },
      length: function () { return frames.length; },
      frames: function () { return frames; },       // as the player reads them (panels unpacked)
      playing: function () { return !!timer; },
      camera: camera,
      // the Stepper: Python appends frames as its engine runs and says when backward has finished
      setFrames: function (fs, isFinished, n, k) {
        var reset = fs.length < frames.length;
        frames = unpack(fs); finished = !!isFinished; total = n || fs.length;
        if (k === undefined) k = wanted !== null ? wanted : current;
        if (reset || current > frames.length - 1) current = -1;   // a reset: fold from the start
        go(Math.min(k, frames.length - 1), true);
      }
    };
    root.__gv = api;
    players.push(root);
    // on load the whole graph where its text is readable so, else the first step's neighbourhood;
    // the camera follows from the learner's first step on
    go(0, false);
    started = true;
    opening();
    return api;
  }

  /* -- keys: ←/→/space/Home/End work as soon as a player is on screen, no click first -- */
  var lastUsed = null;
  function visible(root) {
    if (!root.isConnected) return 0;
    var r = root.getBoundingClientRect(), h = window.innerHeight, w = window.innerWidth;
    var vis = Math.max(0, Math.min(r.bottom, h) - Math.max(r.top, 0)) * Math.max(0, Math.min(r.right, w) - Math.max(r.left, 0));
    return vis / Math.max(1, r.width * r.height);
  }
  function target(el) {
    var i, best = null, most = 0.25;
    for (i = 0; i < players.length; i++) if (players[i].contains(el)) return players[i];
    if (lastUsed && visible(lastUsed) > 0.25) return lastUsed;
    for (i = 0; i < players.length; i++) {
      var v = visible(players[i]);
      if (v > most) { most = v; best = players[i]; }
    }
    return best;
  }
  function typing(el) {
    if (!el) return false;
    var tag = el.tagName;
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA" || el.isContentEditable) return true;
    return !!(el.closest && el.closest(".cm-editor, .CodeMirror, .monaco-editor, [contenteditable=true]"));
  }
  window.addEventListener("keydown", function (ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey || ev.defaultPrevented) return;
    var el = ev.target && ev.target.nodeType === 1 ? ev.target : document.activeElement;
    if (typing(el)) return;                                               // the slider moves itself
    if (el && el.tagName === "BUTTON" && (ev.key === " " || ev.key === "Enter")) return;   // a button clicks itself
    if (["ArrowRight", "ArrowLeft", " ", "Home", "End"].indexOf(ev.key) < 0) return;
    var root = target(el);
    if (!root) return;
    var api = root.__gv;
    if (ev.key === "ArrowRight") { api.pause(); api.next(); }
    else if (ev.key === "ArrowLeft") { api.pause(); api.prev(); }
    else if (ev.key === " ") { if (api.playing()) api.pause(); else api.play(); }
    else if (ev.key === "Home") { api.pause(); api.go(0); }
    else if (ev.key === "End") { api.pause(); api.go(api.length() - 1); }
    lastUsed = root;
    ev.preventDefault();
    ev.stopPropagation();      // a notebook's own shortcuts (JupyterLab moves between cells) stay out
  }, true);
  window.gradvizPlayer = gradvizPlayer;
})();
