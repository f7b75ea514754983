/* gradviz camera: what to show of an inline SVG, and when. The learner's own pan and zoom (wheel,
   drag, pinch) are panzoom's (vendored beside this file, loaded before it, no network); this file
   decides the framing: the whole drawing on load, then the active node with the edges its gradient
   comes in on and goes out along, at a readable scale, gliding there. Both move one CSS transform.
   Used by the player (player.js) and by static diagrams shown inline in a notebook.

   A view is a centre (cx, cy) and a scale s in CSS px per SVG unit. READABLE is the smallest scale
   the player follows at: Graphviz's 10-unit node text is then >= 10 CSS px. */
(function () {
  "use strict";
  if (window.gradvizCamera) return;
  var READABLE = 1.15, FOLLOW = 1.35, MAX_FOLLOW = 1.6, MAX_ZOOM = 8, PAD = 24;
  var reduceMotion = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;

  function Camera(stage, svg, onUser, ctrlWheel) {
    var box = (svg.getAttribute("viewBox") || "0 0 100 100").split(/[\s,]+/).map(parseFloat);
    var all = { x: box[0], y: box[1], w: box[2] || 1, h: box[3] || 1 };
    var view = { cx: all.x + all.w / 2, cy: all.y + all.h / 2, s: 1 }, anim = null;
    var cam = { all: all, follow: true };
    // the SVG keeps its own size on a canvas that the camera moves with a CSS transform: moving the
    // camera then lays nothing out again (a viewBox change re-lays out every text of a big graph)
    var canvas = document.createElement("div");
    canvas.className = "gv-canvas";
    canvas.style.width = all.w + "px";
    canvas.style.height = all.h + "px";
    svg.parentNode.insertBefore(canvas, svg);
    canvas.appendChild(svg);
    svg.setAttribute("width", all.w + "px");
    svg.setAttribute("height", all.h + "px");
    svg.style.width = all.w + "px";
    svg.style.height = all.h + "px";
    cam.canvas = canvas;
    // panzoom owns the pointer: it moves `canvas` by a transform matrix it keeps in `model`; the
    // camera's own moves write the same matrix (and the model), so either can take over at any time
    var pz = window.gradvizPanzoom(canvas, {
      maxZoom: MAX_ZOOM, minZoom: 0.02, smoothScroll: false, zoomDoubleClickSpeed: 1,
      disableKeyboardInteraction: true,   // the arrow keys step the animation
      beforeWheel: function (ev) { return ctrlWheel && !ev.ctrlKey && !ev.metaKey; }   // a plain wheel scrolls the page
    });
    var model = pz.getTransform();
    cam.panzoom = pz;

    // the stage's size, kept between resizes: reading clientWidth in the middle of a step would lay
    // the page out there and then. Below a banner over the stage's top (cam.keepClear), z.h is the
    // room left under it and z.top the banner's bottom: the camera frames what it shows in that room
    var dims = null, observed = !!window.ResizeObserver, banner = null;
    function size() {
      if (dims) return dims;
      var top = banner ? banner.offsetTop + banner.offsetHeight : 0;
      var z = { w: stage.clientWidth || 1, h: Math.max(stage.clientHeight - top, 1), top: top };
      if (observed && z.w >= 10 && z.h >= 10) dims = z;
      return z;
    }
    function write(v) {
      var z = size();
      view = v;
      if (z.w < 10 || z.h < 10 || !(v.s > 0)) return;     // not laid out yet (a hidden notebook output)
      model.x = z.w / 2 - (v.cx - all.x) * v.s;
      model.y = z.top + z.h / 2 - (v.cy - all.y) * v.s;
      model.scale = v.s;
      canvas.style.transform = "matrix(" + v.s.toFixed(4) + ",0,0," + v.s.toFixed(4) + "," + model.x.toFixed(2) + ","
        + model.y.toFixed(2) + ")";
      if (cam.onView) cam.onView(v, z);
    }
    function fitScale(r, pad) {
      var z = size();
      return Math.max(1e-3, Math.min((z.w - 2 * pad) / Math.max(r.w, 1), (z.h - 2 * pad) / Math.max(r.h, 1)));
    }
    function to(v, smooth) {
      if (anim) cancelAnimationFrame(anim);
      anim = null;
      if (!smooth || reduceMotion || size().w < 10) { write(v); return; }
      var from = view, t0 = performance.now(), ms = 380;
      function stepAnim(now) {
        var t = Math.min(1, (now - t0) / ms), e = t < .5 ? 2 * t * t : 1 - Math.pow(-2 * t + 2, 2) / 2;
        // interpolate the scale geometrically, so zooming feels even
        write({ cx: from.cx + (v.cx - from.cx) * e, cy: from.cy + (v.cy - from.cy) * e,
                s: from.s * Math.pow(v.s / from.s, e) });
        anim = t < 1 ? requestAnimationFrame(stepAnim) : null;
      }
      anim = requestAnimationFrame(stepAnim);
    }
    cam.view = function () { return view; };
    cam.look = function (v) { to(v, false); };
    cam.readable = READABLE;
    cam.moving = function () { return !!anim; };
    // the whole of r in view (r: a box in SVG units, the whole drawing when absent)
    cam.fitAll = function (smooth, r) {
      r = r || all;
      to({ cx: r.x + r.w / 2, cy: r.y + r.h / 2, s: Math.min(fitScale(r, 8), MAX_FOLLOW) }, smooth);
    };
    cam.refresh = function () { if (!anim) write(view); };
    // an element over the stage's top (an opened box's banner) that framing leaves clear
    cam.keepClear = function (el) { banner = el; dims = null; };
    // frame the first of `wants` (most context first, the node itself last) that is readable: the
    // whole graph when it is readable at once, else the least movement that shows the target
    // the view's centre on one axis: pan as little as possible from c so that [at, at + len] (the
    // target) is inside a view of half-width `half`, and with it the whole context [cAt, cAt + cLen]
    // when that fits too; a context too big to fit is cut evenly on both sides, not all on one
    function place(c, at, len, cAt, cLen, half) {
      if (len > 2 * half) return at + len / 2;
      var lo = at + len - half, hi = at + half;
      if (cLen <= 2 * half) { lo = Math.max(lo, cAt + cLen - half); hi = Math.min(hi, cAt + half); }
      else lo = hi = Math.min(Math.max(cAt + cLen / 2, lo), hi);
      return lo > hi ? (lo + hi) / 2 : Math.min(Math.max(c, lo), hi);
    }
    cam.frame = function (wants, smooth) {
      var z = size();
      if (z.w < 10 || z.h < 10) return null;
      // the whole graph with the labels written beside its edges (wants[0] holds them): a long value
      // on an edge near the graph's side would otherwise run past the stage's edge
      var c = wants[0], x0 = Math.min(all.x, c.x), y0 = Math.min(all.y, c.y),
          span = { x: x0, y: y0, w: Math.max(all.x + all.w, c.x + c.w) - x0, h: Math.max(all.y + all.h, c.y + c.h) - y0 };
      var sAll = Math.min(fitScale(span, 8), MAX_FOLLOW);
      if (sAll >= READABLE) { var whole = { cx: span.x + span.w / 2, cy: span.y + span.h / 2, s: sAll }; to(whole, smooth); return whole; }
      var cur = view, s = cur.s, r = wants[wants.length - 1], i;
      for (i = 0; i < wants.length; i++) if (fitScale(wants[i], PAD) >= READABLE) { r = wants[i]; break; }
      // keep the learner's scale when it is readable and shows r, else the largest readable one up to FOLLOW
      if (s < READABLE || s > MAX_FOLLOW * 1.5 || fitScale(r, PAD) < s) s = Math.max(READABLE, Math.min(FOLLOW, fitScale(r, PAD)));
      var hw = z.w / (2 * s) - PAD / s, hh = z.h / (2 * s) - PAD / s, ctx = wants[0];
      var cx = place(cur.cx, r.x, r.w, ctx.x, ctx.w, hw), cy = place(cur.cy, r.y, r.h, ctx.y, ctx.h, hh);
      if (Math.abs(cx - cur.cx) < .5 && Math.abs(cy - cur.cy) < .5 && s === cur.s) return cur;
      var v = { cx: cx, cy: cy, s: s };
      to(v, smooth);
      return v;   // where the camera is going (it glides there)
    };
    // the part of the drawing a view shows, in SVG units
    cam.shows = function (v) {
      var z = size();
      return { x: v.cx - z.w / (2 * v.s), y: v.cy - z.h / (2 * v.s), w: z.w / v.s, h: z.h / v.s };
    };
    cam.zoomAt = function (factor, px, py) {
      var z = size(), v = view, s = Math.max(Math.min(fitScale(all, 8), .05), Math.min(MAX_ZOOM, v.s * factor));
      // keep the point under the pointer where it is
      var ux = v.cx + (px - z.w / 2) / v.s, uy = v.cy + (py - z.top - z.h / 2) / v.s;
      to({ cx: ux - (px - z.w / 2) / s, cy: uy - (py - z.top - z.h / 2) / s, s: s }, false);
    };
    // -- the learner's own camera: panzoom moved the drawing (wheel, drag, pinch); read the view back --
    // (only after a pan or zoom of the learner's: panzoom also applies its model once when it starts)
    var byUser = false;
    pz.on("pan", function () { byUser = true; });
    pz.on("zoom", function () { byUser = true; });
    pz.on("transform", function () {
      if (!byUser) return;
      byUser = false;
      var z = size();
      if (anim) { cancelAnimationFrame(anim); anim = null; }
      view = { cx: all.x + (z.w / 2 - model.x) / model.scale, cy: all.y + (z.top + z.h / 2 - model.y) / model.scale,
               s: model.scale };
      if (cam.onView) cam.onView(view, z);
      onUser();
    });
    pz.on("panstart", function () { stage.classList.add("gv-dragging"); });
    pz.on("panend", function () { stage.classList.remove("gv-dragging"); });
    if (observed) new ResizeObserver(function () { dims = null; cam.refresh(); if (cam.onResize) cam.onResize(); }).observe(stage);
    return cam;
  }

  window.gradvizCamera = Camera;

  /* -- a static diagram shown inline: the same camera, ctrl+wheel or pinch to zoom, drag to pan,
     double-click to fit again -- */
  // a static diagram inline: shown at the width it is given (up to MAX_FOLLOW), never at a scale
  // under 1, where Graphviz's 10-unit text would be under 10 CSS px: a drawing too big for that
  // opens on its start (the top, or the left when drawn left to right), to be panned
  window.gradvizDiagram = function (root) {
    if (!root || root.__gv) return;
    var stage = root.querySelector(".gv-stage"), svg = stage.querySelector("svg");
    var vb = (svg.getAttribute("viewBox") || "0 0 100 100").split(/[\s,]+/).map(parseFloat);
    var w = vb[2] || 1, h = vb[3] || 1;
    function layout() {
      // grown only as far as the whole still fits the height it may take; a tall drawing is shown
      // whole at its drawn size (the page scrolls it, as it would an image): only a wide one pans
      var cw = Math.max(root.clientWidth, 1), tall = Math.max(480, window.innerHeight * 0.8);
      var s = Math.max(1, Math.min(MAX_FOLLOW, cw / w, tall / h));
      stage.style.aspectRatio = "auto";
      stage.style.width = Math.min(cw, w * s) + "px";
      stage.style.height = h * s + "px";
      return s;
    }
    var scale = layout();
    var camera = Camera(stage, svg, function () {}, true);
    function look() {
      scale = layout();
      var vw = stage.clientWidth / scale, vh = stage.clientHeight / scale, a = camera.all;
      camera.look({ cx: w <= vw ? a.x + a.w / 2 : a.x + vw / 2, cy: h <= vh ? a.y + a.h / 2 : a.y + vh / 2, s: scale });
    }
    camera.onResize = function () { if (!root.__gvMoved) look(); };
    stage.addEventListener("pointerdown", function () { root.__gvMoved = true; });
    stage.addEventListener("wheel", function (ev) { if (ev.ctrlKey || ev.metaKey) root.__gvMoved = true; });
    stage.addEventListener("dblclick", function () { root.__gvMoved = false; camera.fitAll(true); });
    look();
    root.__gv = { camera: camera };
  };
})();
