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

  // One layout on one stage: its nodes and edges by id, its camera, tiles and label overlay, and the
  // state classes it shows. A player has one for the whole graph and one for each folded box the
  // learner opens (inside.py lays the box out unfolded); frames are state changes on either.
  // hooks.user(): the learner moved the camera; hooks.started(): the player follows from now on.
  function View(stage, svg, mid, hooks) {
    var v = { stage: stage, svg: svg, mid: mid || {}, shown: {}, thick: {}, at: -1 };
    var els = v.els = {};
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
    var shown = v.shown, thick = v.thick;
    var camera = v.camera = Camera(stage, svg, hooks.user);
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

    // a node's or edge's box, read from its shapes' coordinates (no getBBox: that would lay the SVG
    // out in the middle of a step), in the graph group's coordinates; kept, since the layout never moves
    var boxes = {};
    function box(el) {
      if (el.id && boxes[el.id] !== undefined) return boxes[el.id];
      var b = toGraph(scan(el));
      if (el.id) boxes[el.id] = b;
      return b;
    }
    function toGraph(b) { return b && { x: b.x * gs[0] + gt[0], y: b.y * gs[1] + gt[1], w: b.w * gs[0], h: b.h * gs[1] }; }
    v.box = box;
    function outline(el) {
      var s = el.querySelector("polygon, path"), n = s ? (s.getAttribute(s.localName === "path" ? "d" : "points") || "").match(NUM) : null;
      if (!n) return box(el);
      var x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
      for (var j = 0; j + 1 < n.length; j += 2) {
        var x = +n[j], y = +n[j + 1];
        if (x < x0) x0 = x; if (x > x1) x1 = x; if (y < y0) y0 = y; if (y > y1) y1 = y;
      }
      return { x: x0 * gs[0] + gt[0], y: y0 * gs[1] + gt[1], w: (x1 - x0) * gs[0], h: (y1 - y0) * gs[1] };
    }
    // only the tiles in and near the view are laid out and painted (a step then costs what the
    // view shows, not what the graph holds); the others wait with display: none
    function cull(w, z) {
      var hw = z.w / w.s, hh = z.h / w.s, x0 = w.cx - hw, x1 = w.cx + hw, y0 = w.cy - hh, y1 = w.cy + hh,
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
    camera.onView = function (w, z) {
      if ((w.s < FAR) !== far) { far = !far; stage.classList.toggle("gv-far", far); }
      cull(w, z);
      keepCaptions(w, z);
    };
    // the boxes' titles and the graph's legend stay whole in the stage as the camera moves: one the
    // view cuts at its left or right slides in (its middle kept over its own box), and back when it can
    var captions = null;
    function keepCaptions(w, z) {
      if (!captions) {
        captions = [];
        [graph].concat(Array.prototype.slice.call(graph.querySelectorAll("g.cluster"))).forEach(function (g) {
          var texts = g.querySelectorAll(":scope > text"), b = extent(texts);
          if (b) captions.push({ texts: texts, shift: 0, at: toGraph(b), room: g === graph ? camera.all : outline(g) });
        });
      }
      var hw = z.w / (2 * w.s), hh = z.h / (2 * w.s), pad = 4 / w.s, left = w.cx - hw + pad, right = w.cx + hw - pad;
      captions.forEach(function (c) {
        var b = c.at, dx = 0;
        if (b.y > w.cy + hh || b.y + b.h < w.cy - hh) return;      // out of sight: left as it is
        if (b.w <= right - left && b.x + b.w > left && b.x < right) {
          dx = b.x < left ? left - b.x : b.x + b.w > right ? right - b.x - b.w : 0;
          // its middle stays over its own box (a box the view cuts may leave it hanging out a little)
          dx = Math.min(Math.max(dx, c.room.x - b.x - b.w / 2), c.room.x + c.room.w - b.x - b.w / 2);
        }
        if (Math.abs(dx - c.shift) < .5) return;
        c.shift = dx;
        Array.prototype.forEach.call(c.texts, function (t) {
          if (t.__x === undefined) t.__x = parseFloat(t.getAttribute("x")) || 0;
          t.setAttribute("x", String(t.__x + dx / gs[0]));
        });
      });
    }
    // what the camera frames at a frame: its node, the edges its gradient comes in on and goes out
    // along with the values written on them, and the nodes at their other ends (as much as is readable)
    function ends(edge) {
      var t = edge.querySelector("title"), m = t ? /^(.*?)->(.*)$/.exec(t.textContent) : null;
      return m ? [els[m[1]], els[m[2]]] : [];
    }
    // the overview: the whole graph, or while forward is still building it, the part drawn so far
    // (fitting nodes that are not there yet would shrink the drawn ones out of reading)
    v.overview = function (smooth) {
      var id, r = null, hidden = false;
      for (id in shown) if (shown[id] === "hidden") { hidden = true; break; }
      if (hidden) for (id in els) if (shown[id] !== "hidden") r = union(r, box(els[id]));
      camera.fitAll(smooth, r);
    };
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
    function noteOffscreen(id, w) {
      var r = w && camera.shows(w), off = [];
      if (r) (touching[id] || []).forEach(function (n) {
        var b = shown[n] !== "hidden" ? box(els[n]) : null;
        if (b && (b.x < r.x - 1 || b.y < r.y - 1 || b.x + b.w > r.x + r.w + 1 || b.y + b.h > r.y + r.h + 1)) off.push(nodeName(els[n]));
      });
      offNote.textContent = off.length ? "off screen: " + off.join(", ") + " (drag or zoom out to see)" : "";
      offNote.hidden = !off.length;
    }
    var labelBox = null;       // where the labels are, for the camera (in the same terms as box())
    v.aim = function (f, smooth) {
      if (!camera.follow || !hooks.started()) { offNote.hidden = true; return; }
      var node = f && f.n && els[f.n] ? box(els[f.n]) : null;
      if (!node) { offNote.hidden = true; v.overview(smooth); return; }
      var near = node, wide, id;
      for (id in f.c) if (f.c[id] === "flowing" && els[id]) near = union(near, box(els[id]));
      for (id in f.l) if (els[id]) near = union(near, box(els[id]));
      if (labelBox) near = union(near, labelBox);
      wide = near;
      for (id in f.c) if (f.c[id] === "flowing" && els[id]) ends(els[id]).forEach(function (g) { if (g) wide = union(wide, box(g)); });
      // first choice: every node at both ends of the running node's edges (all who sent it gradient too)
      var whole = wide;
      (touching[f.n] || []).forEach(function (n) { if (shown[n] !== "hidden") whole = union(whole, box(els[n])); });
      noteOffscreen(f.n, camera.frame([whole, wide, near, node], smooth));
    };
    // where a node is, to centre it (search); null when this layout does not draw it
    v.centre = function (id) {
      var el = els[id], b = el ? box(el) : null;
      offNote.hidden = true;
      if (b) camera.look({ cx: b.x + b.w / 2, cy: b.y + b.h / 2, s: Math.max(camera.view().s, camera.readable) });
      return b;
    };

    function setState(id, st) {
      var el = els[id];
      if (!el) return;
      if (shown[id]) el.classList.remove("gv-" + shown[id]);
      if (st) { el.classList.add("gv-" + st); shown[id] = st; } else { delete shown[id]; }
    }
    // an edge that has carried gradient is as thick as that gradient is large (frames.width_level)
    function setWidth(id, w) {
      var el = els[id];
      if (!el || thick[id] === w) return;
      if (thick[id] !== undefined) el.classList.remove("gv-w" + thick[id]);
      if (w === undefined) delete thick[id]; else { el.classList.add("gv-w" + w); thick[id] = w; }
    }
    // the state after frames[k] (v.at: the frame it shows now; the usual step applies only what changed)
    v.apply = function (frames, k) {
      var id, c, w;
      if (k === v.at + 1 && v.at >= 0) {
        c = frames[k].c;
        for (id in c) if (shown[id] !== c[id]) setState(id, c[id]);
        w = frames[k].w;
        if (w) for (id in w) setWidth(id, w[id]);
        v.at = k;
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
      v.at = k;
    };
    v.drawLabels = function (l) {
      while (labels.firstChild) labels.removeChild(labels.firstChild);
      labelBox = null;
      for (var id in l) {
        var p = v.mid[id];
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
    };
    return v;
  }
  function scan(el) { return extent(el.querySelectorAll("polygon, polyline, path, ellipse, text")); }
  // the box around some shapes, in their own coordinates
  function extent(shapes) {
    var x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
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
  function nodeName(el) {
    var t = el.querySelectorAll("text"), first = t.length ? t[0].textContent.trim() : el.id,
        second = t.length > 1 ? t[1].textContent.trim() : "";
    return second.indexOf(" = ") > 0 ? first + " (" + second.split(" = ")[0] + ")" : first;
  }

  function gradvizPlayer(root, source) {
    if (!root || root.__gv) return root && root.__gv;
    var data = source || JSON.parse(root.querySelector("script.gv-data").textContent);
    var frames = unpack(data.frames || []), base = data.interval || 1200;
    var zero = data.zero ? 1 : 0, remote = data.remote || null, finished = remote ? !!data.finished : true, total = data.total || frames.length;
    var stage = root.querySelector(".gv-stage"), svg = stage.querySelector("svg");
    var q = function (sel) { return root.querySelector(sel); };
    var slider = q(".gv-slider"), count = q(".gv-count"), title = q(".gv-title"), text = q(".gv-text");
    var live = q(".gv-live"), playBtn = q(".gv-play"), speed = q(".gv-speed"), nextBtn = q(".gv-next"),
        prevBtn = q(".gv-prev"), firstBtn = q(".gv-first"), followBtn = q(".gv-follow"), openBtn = q(".gv-open");
    var code = q(".gv-code"), lines = data.lines || {}, lit = [], panel = q(".gv-panel"), read = null;
    var current = -1, timer = null, wanted = null, started = false, moved = false;   // moved: stepped since load
    var hooks = { user: function () { setFollow(false); }, started: function () { return started; } };
    var main = View(stage, svg, data.mid, hooks), V = main;    // V: the layout on screen
    var camera = main.camera;
    // a folded box opened in place: its own layout over the graph's, stepped through the frames
    // inside it ({box, at: the outer frame, frames, view, k: the frame inside shown})
    var inner = null, opened = null, insets = {}, boxes = data.boxes || {};
    var before = [];          // functions asked before a step is shown (api.before)

    function setFollow(on) {
      V.camera.follow = on;
      if (followBtn) followBtn.setAttribute("aria-pressed", on ? "true" : "false");
    }
    // before the learner's first step: the whole graph where its text is readable so, else the
    // neighbourhood of the frame shown (a big graph's overview would set its text at a few px)
    function opening() {
      main.overview(false);
      if (camera.view().s < camera.readable && frames[current] && frames[current].n) main.aim(frames[current], false);
    }
    camera.onResize = function () { if (camera.follow && moved) main.aim(frames[current], false); else if (!moved) opening(); };
    // the learner's line that made the node at work (a folded box: the lines that made its nodes):
    // highlighted, and the first scrolled into the code box (never the page) when it is out of sight
    function markLine(id) {
      if (!code) return;
      var keys = (id && lines[id]) || [];
      keys = typeof keys === "string" ? [keys] : keys;
      lit.forEach(function (e) { e.classList.remove("gv-current"); });
      lit = keys.map(function (k) { return code.querySelector('[data-line="' + k + '"]'); }).filter(Boolean);
      lit.forEach(function (e) { e.classList.add("gv-current"); });
      var el = lit[0];
      if (!el) return;
      // the whole line centred in the box below the file's name, which sticks to the box's top (a
      // wrapped line is several rows tall; one taller than the room shows its start)
      var name = code.querySelector(".gv-file"), room = name ? name.offsetHeight : 0;
      var top = el.offsetTop, h = code.clientHeight - room, lh = el.offsetHeight;
      if (top < code.scrollTop + room || top + lh > code.scrollTop + code.clientHeight)
        code.scrollTop = Math.max(0, top - room - Math.max(0, (h - lh) / 2));
    }
    // a frame of the phase that builds the graph: made by the forward pass, or by a create_graph
    // backward ("first backward (create_graph) 3/7 · MulBackward0"; frames.py's "t")
    function forwardTitle(t) { return !!t && (t.indexOf("forward") === 0 || / backward \(create_graph\) /.test(t)); }
    function shownFrame() { return opened ? opened.frames[opened.k] : frames[current]; }
    function controls() {
      var k = current, n = finished ? frames.length : Math.max(total, frames.length);
      slider.max = String(Math.max(n - 1, 0));
      slider.value = String(k);
      // counted by phase, the same in the saved player and the Stepper: "forward 3 of 10", then
      // "backward 1 of 12"; where the data counts steps (a folded box's frame runs several), the
      // counter counts them: "backward 9–39 of 134", as the panel's title does, inside a box too.
      // With `zero`, frame 0 is the moment before its phase's first step (the Stepper before
      // backward, forward mode's seed tangents) and counts as 0: "backward 0 of 12"
      var fwd = 0;
      while (fwd < frames.length && forwardTitle(frames[fwd].t)) fwd++;
      var allForward = fwd > 0 && fwd === frames.length, zf = fwd > 0 ? zero : 0, zb = zero - zf;
      var f = shownFrame(), steps = data.steps;
      // a frame that builds the graph counts as its title does, by the pass that built its node
      // ("first backward (create_graph) 1/3" beside "first backward (create_graph) 1 of 3", never "forward")
      var built = k < fwd && !opened && f && /^(forward|\w+ backward \(create_graph\)) (\d+(?:–\d+)?)\/(\d+) · /.exec(f.t);
      if (built) {
        count.textContent = built[1] + " " + built[2] + " of " + built[3];
      } else if (steps && f && f.k) {
        var span = f.k[0] === f.k[1] ? String(f.k[0]) : f.k[0] + "–" + f.k[1];
        count.textContent = (k < fwd ? "forward " + span + " of " + steps[0] : "backward " + span + " of " + steps[1])
          + (opened ? " · in " + opened.title : "");
      } else {
        count.textContent = k < fwd ? "forward " + (k + 1 - zf) + " of " + ((allForward ? n : fwd) - zf)
                                    : "backward " + (k - fwd + 1 - zb) + " of " + (n - fwd - zb);
      }
      var atEnd = finished && k >= frames.length - 1 && (!opened || opened.k >= opened.frames.length - 1);
      nextBtn.disabled = atEnd;
      prevBtn.disabled = k <= 0 && !opened;
      if (firstBtn) firstBtn.disabled = k <= 0;
      if (openBtn) {
        var can = openable(k);
        openBtn.hidden = !can && !opened;
        openBtn.textContent = opened ? "close box" : "open box";
        openBtn.setAttribute("aria-pressed", opened ? "true" : "false");
        if (can || opened) openBtn.title = (opened ? "Close " : "Open ") + boxes[opened ? opened.box : frames[k].n].title
          + (opened ? " (Esc)" : " where it stands and step through its nodes (o)");
      }
    }
    // the frame's panel, labels, code line and counter (f: a frame of the layout on screen)
    function show(f, smooth) {
      V.drawLabels(f.l);
      title.innerHTML = f.t;
      morph(text, f.h);
      // a new step is read from its top: the panel keeps its scroll across a change of content, so a
      // learner who scrolled down one step's long panel would land halfway into the next, its title
      // and formula out of sight
      var step = opened ? opened.at + ":" + opened.k : String(current);
      if (panel && step !== read) { panel.scrollTop = 0; read = step; }
      markLine(f.n);
      if (live) live.textContent = f.s || title.textContent;
      root.setAttribute("data-node", f.n || "");
      controls();
      if (started) { moved = true; V.aim(f, smooth !== false); }
    }
    function go(k, smooth) {
      if (!frames.length) return;
      k = Math.max(0, k | 0);
      if (k > frames.length - 1) {
        if (remote && !finished) { wanted = k; remote.request(k); return; }   // Python runs the engine
        k = frames.length - 1;
      }
      if (opened) shut();
      wanted = null;
      main.apply(frames, k);
      current = k;
      root.setAttribute("data-frame", String(k));
      show(frames[k], smooth);
      if (remote && remote.moved) remote.moved(k);
    }
    // -- a folded box, opened in place ---------------------------------------------------------
    function inset(box) {
      if (insets[box]) return insets[box];
      var el = document.createElement("div");
      el.className = "gv-stage gv-inset";
      el.setAttribute("role", "img");
      el.setAttribute("aria-label", boxes[box].title + ", opened: its nodes one by one");
      el.innerHTML = boxes[box].svg;
      var head = document.createElement("div");
      head.className = "gv-inset-title";
      head.textContent = boxes[box].title + ", opened · Esc or “close box” folds it again";
      el.appendChild(head);
      stage.parentNode.insertBefore(el, stage.nextSibling);
      insets[box] = View(el, el.querySelector("svg"), boxes[box].mid, hooks);
      insets[box].camera.keepClear(head);   // the camera frames the running node below the banner, never under it
      return insets[box];
    }
    function openable(k) { var f = frames[k]; return !!(f && f.i && boxes[f.n]); }
    function open(j) {
      var f = frames[current];
      if (!openable(current)) return false;
      if (!inner) inner = unpack(data.inner || []);
      if (!opened) {
        var view = inset(f.n);
        opened = { box: f.n, title: boxes[f.n].title, at: current, frames: inner.slice(f.i[0], f.i[1]), view: view, k: 0 };
        view.at = -1;
        view.stage.hidden = false;
        stage.classList.add("gv-under");
        root.classList.add("gv-opened");
        V = view;
        V.camera.follow = camera.follow;
        V.camera.refresh();
      }
      goInner(j === undefined ? 0 : j < 0 ? opened.frames.length - 1 : j, false);
      return true;
    }
    function goInner(j, smooth) {
      opened.k = Math.max(0, Math.min(j, opened.frames.length - 1));
      V.apply(opened.frames, opened.k);
      show(opened.frames[opened.k], smooth);
    }
    function shut() {                 // back to the whole graph, at the box's frame
      if (!opened) return;
      opened.view.stage.hidden = true;
      stage.classList.remove("gv-under");
      root.classList.remove("gv-opened");
      camera.follow = V.camera.follow;
      opened = null;
      V = main;
    }
    function close() { if (opened) { shut(); show(frames[current], true); } }
    function toggleBox() { if (opened) close(); else open(); }

    // a reveal of a player partly scrolled away (a notebook) brings it into view
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
    // the frame the next step shows, for the functions given to api.before: one returning false
    // keeps the step from being shown (a mode that asks the learner first shows it later with go)
    function ask(f) {
      for (var i = 0; i < before.length; i++) if (f && before[i](f, api) === false) return false;
      return true;
    }
    function next() {
      reveal();
      if (opened) {
        if (opened.k < opened.frames.length - 1) { if (ask(opened.frames[opened.k + 1])) goInner(opened.k + 1); return; }
        if (finished && current >= frames.length - 1) return;
      }
      if (!ask(frames[current + 1])) return;
      go(current + 1);
    }
    function prev() {
      reveal();
      if (opened) { if (opened.k > 0) goInner(opened.k - 1); else close(); return; }
      go(current - 1);
    }
    function pause() {
      if (timer) clearTimeout(timer);
      timer = null;
      if (playBtn) playBtn.textContent = "▶ Play";
      root.classList.remove("gv-playing");
      controls();
    }
    function atEnd() { return finished && current >= frames.length - 1 && (!opened || opened.k >= opened.frames.length - 1); }
    function tick() {
      if (atEnd()) { pause(); return; }
      next();
      timer = setTimeout(tick, base / parseFloat((speed && speed.value) || "1"));
    }
    function play() {
      if (timer) return;
      if (atEnd()) go(0);
      if (playBtn) playBtn.textContent = "❚❚ Pause";
      root.classList.add("gv-playing");
      timer = setTimeout(tick, base / parseFloat((speed && speed.value) || "1"));
    }
    function toggle() { if (timer) pause(); else play(); }
    function follow() { setFollow(true); V.aim(shownFrame(), true); }
    function reset() {
      pause();
      if (opened) shut();
      setFollow(true);
      if (remote && remote.reset) { remote.reset(); return; }
      go(0);
    }
    function focusNode(g) {
      var b = V.box(g);
      if (!b) return;
      setFollow(false);
      V.camera.frame([b], true);
    }

    // -- find: a parameter, a tensor's name or a node's type; the boxes holding it open ----------
    // data.names: [text, node id, the box it is folded into or ""], and for the nodes of a box that does
    // not open, compact entries (inside.py's `compact`) written out here on the first find; without
    // data.names, the drawn nodes' texts
    var finder = q(".gv-find"), foundNote = q(".gv-found"), names = data.names, hits = [], hit = -1, marked = null;
    var SUB = "₀₁₂₃₄₅₆₇₈₉";
    function written(h) {
      var out = [], parts = h.t.split(/([\x01\x02])/), r, v, k, nums, text, i;
      for (r = 0; r < h.r.length; r += 2) {
        for (v = h.r[r]; v < h.r[r] + h.r[r + 1]; v++) {
          nums = h.k.slice(0, h.p).concat([v], h.k.slice(h.p)); k = 0; text = "";
          for (i = 0; i < parts.length; i++) {
            if (parts[i] === "\x01") text += String(nums[k++]);
            else if (parts[i] === "\x02") text += String(nums[k++]).replace(/[0-9]/g, function (d) { return SUB[d]; });
            else text += parts[i];
          }
          out.push([text, "", h.b]);
        }
      }
      return out;
    }
    function entries() {
      if (!names) names = Object.keys(main.els).filter(function (id) { return main.els[id].classList.contains("node"); })
        .map(function (id) { return [main.els[id].textContent.replace(/\s+/g, " ").trim(), id, ""]; });
      if (!names.expanded) {
        var all = [];
        names.forEach(function (h) { if (Array.isArray(h)) all.push(h); else written(h).forEach(function (e) { all.push(e); }); });
        names = all; names.expanded = true;
      }
      return names;
    }
    function mark(el) {
      if (marked) marked.classList.remove("gv-hit");
      marked = el;
      if (el) el.classList.add("gv-hit");
    }
    // the step inside a box's frame f that runs node id, or writes its .grad (a parameter), else its first
    function stepOf(f, id) {
      if (!inner) inner = unpack(data.inner || []);
      for (var j = f.i[0]; j < f.i[1]; j++) {
        var st = inner[j].c[id];
        if (inner[j].n === id || st === "active" || st === "written") return j - f.i[0];
      }
      return -1;
    }
    // show hit h: in its box (opened at the step the box runs now, else its first, at the step inside
    // that runs the hit), or on the graph. The camera shows the hit, with the node the step on screen
    // runs where both fit at a readable size, and follows again from the learner's next step.
    function reach(h) {
      var id = h[1], box = h[2], k, i, j = -1, v = main;
      if (box && boxes[box]) {
        if (!opened || opened.box !== box) {
          // the box's frame on screen, else its first backward one (every node is drawn by then), else any
          k = frames[current] && frames[current].n === box && frames[current].i ? current : -1;
          for (i = 0; k < 0 && i < frames.length; i++) if (frames[i].n === box && frames[i].i && !forwardTitle(frames[i].t)) k = i;
          for (i = 0; k < 0 && i < frames.length; i++) if (frames[i].n === box && frames[i].i) k = i;
          if (k >= 0) { pause(); if (k !== current || opened) go(k); j = stepOf(frames[k], id); open(Math.max(j, 0)); }
        }
        if (opened && opened.box === box) v = V;
      } else if (opened) close();
      if (box && !boxes[box] && main.shown[box] === "hidden") {
        // a box the forward pass has not made yet at this step: the step that makes it
        for (i = 0; i < frames.length; i++) if (frames[i].n === box) { pause(); go(i); break; }
      }
      var target = v.els[id] ? id : box;
      if (v.els[target]) {
        var at = v === V && shownFrame() && V.els[shownFrame().n], hitBox = v.box(v.els[target]);
        if (at && hitBox) V.camera.frame([union(V.box(at), hitBox), hitBox], true); else v.centre(target);
        mark(v.els[target]);
      } else mark(null);
      return !!v.els[target];
    }
    function find(back) {
      var term = finder.value.trim().toLowerCase();
      if (!term) { hits = []; hit = -1; mark(null); foundNote.textContent = ""; return; }
      if (hits.term !== term) {
        hits = entries().filter(function (h) { return h[0].toLowerCase().indexOf(term) >= 0; });
        hits.term = term; hit = -1;
      }
      if (!hits.length) { foundNote.textContent = "not found"; mark(null); return; }
      hit = (hit + (back ? -1 : 1) + hits.length) % hits.length;
      reach(hits[hit]);
      foundNote.textContent = (hit + 1) + " of " + hits.length + ": " + hits[hit][0]
        + (hits[hit][2] && boxes[hits[hit][2]] ? " (in " + boxes[hits[hit][2]].title + ")" : "");
    }
    if (finder) finder.addEventListener("keydown", function (ev) {
      if (ev.key === "Enter") { ev.preventDefault(); find(ev.shiftKey); }
      else if (ev.key === "Escape") { finder.blur(); }
      ev.stopPropagation();
    });

    function on(sel, fn) { var el = q(sel); if (el) el.addEventListener("click", fn); }
    on(".gv-next", function () { pause(); next(); });
    on(".gv-prev", function () { pause(); prev(); });
    on(".gv-first", function () { pause(); go(0); });
    on(".gv-reset", reset);
    on(".gv-play", toggle);
    on(".gv-open", function () { pause(); toggleBox(); });
    on(".gv-fit", function () { setFollow(false); V.overview(true); });
    on(".gv-follow", follow);
    on(".gv-zoom-in", function () { setFollow(false); V.camera.zoomAt(1.25, V.stage.clientWidth / 2, V.stage.clientHeight / 2); });
    on(".gv-zoom-out", function () { setFollow(false); V.camera.zoomAt(0.8, V.stage.clientWidth / 2, V.stage.clientHeight / 2); });
    slider.addEventListener("input", function () { var k = parseInt(slider.value, 10); pause(); go(k); });
    root.querySelector(".gv-frame").addEventListener("dblclick", function (ev) {
      var s = ev.target && ev.target.closest ? ev.target.closest(".gv-stage") : null;
      if (!s || s !== V.stage) return;
      var g = ev.target.closest("g.node");
      if (g) focusNode(g); else { setFollow(false); V.overview(true); }
    });
    root.addEventListener("pointerenter", function () { lastUsed = root; });
    root.addEventListener("pointerdown", function () { lastUsed = root; });

    var api = {
      go: go, next: next, prev: prev, play: play, pause: pause, reset: reset, follow: follow,
      open: open, close: close, find: function (term, back) { if (finder) { finder.value = term; find(back); } },
      frame: function () { return current; },
      length: function () { return frames.length; },
      frames: function () { return frames; },       // as the player reads them (panels unpacked)
      opened: function () { return opened && { box: opened.box, title: opened.title, at: opened.at, k: opened.k, length: opened.frames.length }; },
      shown: shownFrame,                            // the frame on screen (inside an opened box, the box's)
      playing: function () { return !!timer; },
      camera: camera,
      view: function () { return V; },
      // f(frame, api) is asked before each step the learner takes forward; false keeps it from being shown
      before: function (f) { before.push(f); },
      focusFind: function () { if (finder) { finder.focus(); finder.select(); } },
      toggleBox: toggleBox,
      canOpen: function () { return openable(current); },
      // the Stepper: the boxes its backward has run so far, and the frames inside them
      setCounts: function (c) { if (c && c.length) data.steps = c; },
      setInside: function (b, fs, ns) {
        boxes = b || {}; data.inner = fs || []; inner = null;
        if (ns && ns.length) { names = ns; hits = []; }
        controls();
      },
      // the Stepper: Python appends frames as its engine runs and says when backward has finished
      setFrames: function (fs, isFinished, n, k) {
        var reset = fs.length < frames.length;
        if (opened) shut();
        frames = unpack(fs); finished = !!isFinished; total = n || fs.length;
        if (k === undefined) k = wanted !== null ? wanted : current;
        if (reset || current > frames.length - 1) main.at = -1;   // a reset: fold from the start
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

  /* -- keys: ←/→/space/Home/End (and / to find, o / Esc to open or close a box) work as soon as a
     player is on screen, no click first -- */
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
    if (["ArrowRight", "ArrowLeft", " ", "Home", "End", "/", "o", "Escape"].indexOf(ev.key) < 0) return;
    var root = target(el);
    if (!root) return;
    var api = root.__gv;
    // o and Esc only where there is a box to open or close (a notebook keeps its own o otherwise)
    if ((ev.key === "Escape" || ev.key === "o") && !api.opened() && !(ev.key === "o" && api.canOpen())) return;
    if (ev.key === "/") api.focusFind();                      // find in the graph
    else if (ev.key === "o" || ev.key === "Escape") { api.pause(); api.toggleBox(); }   // open / close a folded box
    else if (ev.key === "ArrowRight") { api.pause(); api.next(); }
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
