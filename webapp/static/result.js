// Result page: draws the reading over the photo and a diagram of the position, shows the forced
// dances and the island score, and lets the user correct any misread element; every correction is
// re-analysed at once by POST /api/rules/analyze and saved with the analysis.
"use strict";
(() => {
  const SVG = "http://www.w3.org/2000/svg";
  const DIRS = [[1, 0], [0, 1], [-1, 1], [-1, 0], [0, -1], [1, -1]];   // E SE SW W NW NE
  const SIDES = ["white", "black"];
  const NAME = {white: "White", black: "Black"};
  const LETTER = {white: "W", black: "B"};
  const HEX = 30;                 // diagram hex radius in SVG units
  const SET_DISCS = 16;           // 8 of each colour
  const MAX_HEIGHT = SET_DISCS;   // a stack of every disc

  const $ = (id) => document.getElementById(id);
  const record = JSON.parse($("record").textContent);
  const key = (q, r) => `${q},${r}`;
  const counted = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
  const cellOf = (k) => k.split(",").map(Number);
  const timings = window.exxitTimings = {corrections: []};
  window.exxitState = () => ({position: modelToJSON(state.model), analysis: state.analysis});

  // ---- the position model: Maps keyed "q,r" --------------------------------------------------
  function modelFromJSON(obj) {
    const tiles = new Map();
    const stacks = new Map();
    for (const t of obj.tiles || []) tiles.set(key(t.q, t.r), {colour: t.colour, confidence: t.confidence});
    for (const s of obj.stacks || []) {
      let discs = s.discs;
      if (!Array.isArray(discs)) {
        discs = Array(s.height || 1).fill(null);
        discs[discs.length - 1] = s.top || null;
      }
      stacks.set(key(s.q, s.r), {discs: discs.slice(), confidence: s.confidence, chances: s.height_chances});
    }
    const rest = {};
    for (const [k, v] of Object.entries(obj)) if (!["tiles", "stacks", "to_move"].includes(k)) rest[k] = v;
    return {tiles, stacks, toMove: obj.to_move || null, rest};
  }

  function modelToJSON(model) {
    const obj = Object.assign({}, model.rest, {format: "exxit-position/1", tiles: [], stacks: []});
    for (const [k, t] of model.tiles) {
      const [q, r] = cellOf(k);
      const tile = {q, r, colour: t.colour};
      if (t.confidence !== undefined) tile.confidence = t.confidence;
      obj.tiles.push(tile);
    }
    for (const [k, s] of model.stacks) {
      const [q, r] = cellOf(k);
      const stack = {q, r, discs: s.discs.slice()};
      if (s.confidence !== undefined) stack.confidence = s.confidence;
      if (s.chances !== undefined) stack.height_chances = s.chances;
      obj.stacks.push(stack);
    }
    if (model.toMove) obj.to_move = model.toMove;
    return obj;
  }

  const cloneModel = (model) => modelFromJSON(modelToJSON(model));
  const top = (stack) => stack.discs[stack.discs.length - 1];


  const NO_ANSWER = {forced_dances: {}, islands: {}};
  const state = {
    model: modelFromJSON(record.position),
    analysis: record.analysis,
    problem: record.problem,
    selected: null,
    corrections: record.corrections.slice(),
    history: [],
    request: 0,
    fitNote: "",        // what the last fit to the reserves changed
  };

  // ---- SVG helpers --------------------------------------------------------------------------
  function el(name, attrs, parent, text) {
    const node = document.createElementNS(SVG, name);
    for (const [a, v] of Object.entries(attrs || {})) if (v !== null && v !== undefined) node.setAttribute(a, v);
    if (text !== undefined) node.textContent = text;
    if (parent) parent.appendChild(node);
    return node;
  }
  const points = (pts) => pts.map((p) => `${p[0].toFixed(1)},${p[1].toFixed(1)}`).join(" ");

  // The diagram is turned (by a multiple of 60 degrees, mirrored if need be) to look like the photo:
  // the linear map from diagram to photo is fitted by least squares, and the rotation nearest to it
  // (its polar decomposition) is rounded to the hex lattice's symmetry.
  function photoOrientation(overlay) {
    const pairs = Object.entries(overlay.cells).map(([k, pixel]) => {
      const [q, r] = cellOf(k);
      return [[Math.sqrt(3) * (q + r / 2), 1.5 * r], pixel];
    });
    if (pairs.length < 3) return [1, 0, 0, 1];
    const mean = (i) => [0, 1].map((j) => pairs.reduce((sum, p) => sum + p[i][j], 0) / pairs.length);
    const [dm, pm] = [mean(0), mean(1)];
    let sxx = 0, sxy = 0, syy = 0;
    const c = [0, 0, 0, 0];                 // sum of P p^T
    for (const [d, p] of pairs) {
      const x = d[0] - dm[0], y = d[1] - dm[1], u = p[0] - pm[0], v = p[1] - pm[1];
      sxx += x * x; sxy += x * y; syy += y * y;
      c[0] += u * x; c[1] += u * y; c[2] += v * x; c[3] += v * y;
    }
    const det = sxx * syy - sxy * sxy;
    if (!det) return [1, 0, 0, 1];
    const a = [(c[0] * syy - c[1] * sxy) / det, (c[1] * sxx - c[0] * sxy) / det,
               (c[2] * syy - c[3] * sxy) / det, (c[3] * sxx - c[2] * sxy) / det];
    const mirror = a[0] * a[3] - a[1] * a[2] < 0 ? -1 : 1;
    const b = [a[0], a[1] * mirror, a[2], a[3] * mirror];          // a times diag(1, mirror)
    const step = Math.PI / 3;
    const t = Math.round(Math.atan2(b[2] - b[1], b[0] + b[3]) / step) * step;
    return [Math.cos(t), -Math.sin(t) * mirror, Math.sin(t), Math.cos(t) * mirror];
  }

  // Geometry of the diagram: pointy-top hexes, turned by the 2x2 matrix m.
  function diagramGeometry(m) {
    const turn = (p) => [m[0] * p[0] + m[1] * p[1], m[2] * p[0] + m[3] * p[1]];
    return {
      centre: (q, r) => turn([HEX * Math.sqrt(3) * (q + r / 2), HEX * 1.5 * r]),
      corner(q, r, i) {     // corner i lies between directions i and i+1
        const a = Math.PI / 180 * (60 * i + 30);
        return turn([HEX * Math.sqrt(3) * (q + r / 2) + HEX * Math.cos(a), HEX * 1.5 * r + HEX * Math.sin(a)]);
      },
      size: () => HEX,
    };
  }
  const DIAGRAM = diagramGeometry(photoOrientation(record.overlay));

  // Geometry of the photo: cell centres measured by vision; corners are the means of three centres.
  function photoGeometry(overlay) {
    const cells = overlay.cells;
    const known = (q, r) => cells[key(q, r)];
    let pitch = 0, count = 0;
    for (const k of Object.keys(cells)) {
      const [q, r] = cellOf(k);
      const a = known(q, r), b = known(q + 1, r);
      if (a && b) { pitch += Math.hypot(a[0] - b[0], a[1] - b[1]); count += 1; }
    }
    pitch = count ? pitch / count : Math.max(overlay.width, overlay.height) / 20;
    return {
      centre: (q, r) => known(q, r) || null,
      corner(q, r, i) {
        const a = known(q, r);
        const b = known(q + DIRS[i][0], r + DIRS[i][1]);
        const j = (i + 1) % 6;
        const c = known(q + DIRS[j][0], r + DIRS[j][1]);
        if (!a || !b || !c) return null;
        return [(a[0] + b[0] + c[0]) / 3, (a[1] + b[1] + c[1]) / 3];
      },
      size: () => pitch / Math.sqrt(3),
      top: (q, r) => overlay.tops[key(q, r)] || known(q, r),
    };
  }

  function hexPoints(geo, q, r) {
    const pts = [];
    for (let i = 0; i < 6; i += 1) {
      const p = geo.corner(q, r, i);
      if (!p) return null;
      pts.push(p);
    }
    return pts;
  }

  const neighbours = (k) => {
    const [q, r] = cellOf(k);
    return DIRS.map(([dq, dr]) => key(q + dq, r + dr));
  };

  // Cells shown for editing: tiles, stacks, every cell next to them, and the cells vision doubts
  // a tile on (a tile it dropped may lie further out).
  function editableCells(model) {
    const cells = new Set([...model.tiles.keys(), ...model.stacks.keys()]);
    for (const k of [...cells]) for (const n of neighbours(k)) cells.add(n);
    for (const k of tileSuspects) cells.add(k);
    return cells;
  }

  // Cells vision flagged (its warnings name the reads under its confidence threshold and the
  // impossible ones) and stacks whose confidence is under that threshold (those a fit to the
  // reserves changed too): marked until the user corrects them.
  const cellsNamed = (codes) => new Set((record.reading.warnings || [])
    .filter((w) => w && codes.includes(w.code))
    .flatMap((w) => (w.cells || []).map((c) => key(c[0], c[1]))));
  // Of the tiles vision set aside (ignored-tiles), one or two an empty cell from the World may be
  // tiles the players laid, to put back; a group further out (the supply) is only named.
  const readTiles = new Set((record.reading.tiles || []).map((t) => key(t.q, t.r)));
  const setAside = [...cellsNamed(["ignored-tiles"])];
  const nearTheWorld = setAside.filter((k) => neighbours(k).some((n) => readTiles.has(n) ||
    neighbours(n).some((m) => readTiles.has(m))));
  const besideTheWorld = setAside.filter((k) => nearTheWorld.includes(k) ||
    neighbours(k).some((n) => nearTheWorld.includes(n)));      // the pair's other tile
  const tileSuspects = new Set([
    ...cellsNamed(["uncertain-tiles", "world-disconnected", "added-to-the-diamond", "laid-beside-two",
      "laid-beside-a-stack", "dropped-to-the-set", "unlike-the-tiles"]),
    ...besideTheWorld]);
  const stackSuspects = cellsNamed(["uncertain-stacks", "lowered-to-the-set", "stack-too-tall", "isolated-stack",
    "second-photo-only"]);
  const doubtfulCell = (k) => tileSuspects.has(k);
  const UNSURE_BELOW = Number($("result").dataset.unsureBelow);
  const doubtfulStack = (k) => {
    const stack = state.model.stacks.get(k);
    return stackSuspects.has(k) || (stack !== undefined && stack.confidence < UNSURE_BELOW);
  };

  function markDoubt(layer, pts, centre, size) {
    el("polygon", {points: points(pts), class: "low-confidence"}, layer);
    el("text", {x: centre[0] - 0.15 * size, y: centre[1] - 0.45 * size, "font-size": 0.5 * size, class: "low-mark"},
      layer, "?");
  }

  function shownSides() {
    return state.model.toMove ? [state.model.toMove] : SIDES;
  }

  // Once the game is over no dance is played (RULES.md 9): none is listed or drawn.
  function dancingSides() {
    return state.analysis && state.analysis.game_over ? [] : shownSides();
  }

  function danceEnd(dance) {
    return dance.drops[dance.drops.length - 1];
  }

  // ---- drawing (shared by the diagram, the previews and the photo) ---------------------------
  // Where an island's points go: its cell nearest the island's centre that holds no stack.
  function labelCell(cells, stacks, geo) {
    let sx = 0, sy = 0, n = 0;
    for (const k of cells) {
      const c = geo.centre(...cellOf(k));
      if (c) { sx += c[0]; sy += c[1]; n += 1; }
    }
    let best = null, bestDistance = Infinity;
    for (const k of cells) {
      const c = geo.centre(...cellOf(k));
      if (!c) continue;
      const d = Math.hypot(c[0] - sx / n, c[1] - sy / n) + (stacks.has(k) ? 1e6 : 0);
      if (d < bestDistance) { best = c; bestDistance = d; }
    }
    return best;
  }

  function drawIslands(layer, geo, analysis, stacks) {
    for (const colour of SIDES) {
      const islands = (analysis.islands || {})[colour] || [];
      islands.forEach((island, index) => {
        const cells = new Set(island.map((c) => key(c[0], c[1])));
        const group = el("g", {class: `island island-${colour}${index === 0 ? " largest" : ""}`}, layer);
        for (const k of cells) {
          const [q, r] = cellOf(k);
          DIRS.forEach(([dq, dr], d) => {
            if (cells.has(key(q + dq, r + dr))) return;
            const a = geo.corner(q, r, (d + 5) % 6), b = geo.corner(q, r, d);
            if (a && b) el("line", {x1: a[0], y1: a[1], x2: b[0], y2: b[1]}, group);
          });
        }
        const at = labelCell(cells, stacks, geo);
        if (!at) return;
        const points = index === 0 ? `${island.length}×2` : `${island.length}`;
        const s = geo.size();
        const label = el("g", {class: `island-points points-${colour}`,
          transform: `translate(${at[0].toFixed(1)},${at[1].toFixed(1)})`}, group);
        el("rect", {x: -0.55 * s, y: -0.27 * s, width: 1.1 * s, height: 0.5 * s, rx: 0.2 * s}, label);
        el("text", {"font-size": 0.36 * s, "text-anchor": "middle", "dominant-baseline": "central"}, label, points);
      });
    }
  }

  function drawStack(layer, geo, k, stack, at, options) {
    const s = geo.size();
    const owner = top(stack);
    const [x, y] = at;
    const group = el("g", {class: `stack owner-${owner || "unknown"}`, "data-cell": k}, layer);
    const order = stack.discs.map((d) => (d ? LETTER[d] : "?")).join("");
    el("title", {}, group, `${k}: stack of ${stack.discs.length}, bottom→top ${order}` +
      (typeof stack.confidence === "number" ? `, read with confidence ${stack.confidence.toFixed(2)}` : ""));
    el("circle", {cx: x, cy: y, r: 0.5 * s, class: owner ? `disc-${owner}` : "disc-unknown"}, group);
    el("text", {x, y, "font-size": 0.42 * s, "text-anchor": "middle", "dominant-baseline": "central",
      class: `label-${owner || "unknown"}`}, group, `${owner ? LETTER[owner] : "?"}${stack.discs.length}`);
    if (options.discOrder && stack.discs.length > 1) {
      const h = Math.min(0.16 * s, 0.9 * s / stack.discs.length);
      stack.discs.forEach((disc, i) => {
        el("rect", {x: x + 0.56 * s, y: y + 0.45 * s - (i + 1) * h, width: 0.26 * s, height: h,
          class: disc ? `chip disc-${disc}` : "chip disc-unknown"}, group);
      });
    }
    if (options.confidence && doubtfulStack(k)) {
      el("circle", {cx: x, cy: y, r: 0.68 * s, class: "low-confidence"}, group);
      el("text", {x: x - 0.62 * s, y: y - 0.5 * s, "font-size": 0.45 * s, class: "low-mark"}, group, "?");
    }
  }

  function drawDances(layer, geo, analysis, sides, fromPoint) {
    const s = geo.size();
    for (const colour of sides) {
      const dances = (analysis.forced_dances || {})[colour] || [];
      dances.forEach((dance, i) => {
        const a = fromPoint(dance.from[0], dance.from[1]);
        const end = danceEnd(dance);
        const b = geo.centre(end[0], end[1]);
        const t = geo.centre(dance.target[0], dance.target[1]);
        if (!a || !b) return;
        const group = el("g", {class: `dance dance-${colour}`, "data-index": i}, layer);
        if (t) el("circle", {cx: t[0], cy: t[1], r: 0.62 * s, class: "target"}, group);
        // a curved arrow from the rim of the dancing stack to the rim of the last cell's disc:
        // White's arrows bend to one side, Black's to the other, so a dance and its reverse (both
        // sides shown) stay apart and even a one-cell dance shows its shaft
        const len = Math.hypot(b[0] - a[0], b[1] - a[1]) || 1;
        const bend = (colour === "white" ? 1 : -1) * Math.min(Math.max(0.25 * len, 0.5 * s), 1.0 * s);
        const c = [(a[0] + b[0]) / 2 - (b[1] - a[1]) / len * bend, (a[1] + b[1]) / 2 + (b[0] - a[0]) / len * bend];
        const toward = (p, q, d) => {
          const l = Math.hypot(q[0] - p[0], q[1] - p[1]) || 1;
          return [p[0] + (q[0] - p[0]) / l * d, p[1] + (q[1] - p[1]) / l * d];
        };
        const start = toward(a, c, 0.5 * s), stop = toward(b, c, 0.45 * s);
        el("path", {d: `M${start[0].toFixed(1)},${start[1].toFixed(1)} Q${c[0].toFixed(1)},${c[1].toFixed(1)} ` +
          `${stop[0].toFixed(1)},${stop[1].toFixed(1)}`, class: "dance-arrow",
          "marker-end": `url(#arrow-${colour})`}, group);
        const middle = [0, 1].map((j) => 0.25 * start[j] + 0.5 * c[j] + 0.25 * stop[j]);
        el("text", {x: middle[0], y: middle[1], "font-size": 0.45 * s, "text-anchor": "middle",
          "dominant-baseline": "central", class: "dance-number"}, group, String(i + 1));
      });
    }
  }

  // The clean diagram of a position; interactive when `options.edit` is set.
  function drawDiagram(svg, model, analysis, options) {
    svg.textContent = "";
    const geo = DIAGRAM;
    const cells = options.edit ? editableCells(model) : new Set([...model.tiles.keys(), ...model.stacks.keys()]);
    let minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
    for (const k of cells) {
      const [x, y] = geo.centre(...cellOf(k));
      minX = Math.min(minX, x); maxX = Math.max(maxX, x); minY = Math.min(minY, y); maxY = Math.max(maxY, y);
    }
    if (!cells.size) { minX = minY = -HEX; maxX = maxY = HEX; }
    const pad = HEX * 1.2;
    svg.setAttribute("viewBox", `${minX - pad} ${minY - pad} ${maxX - minX + 2 * pad} ${maxY - minY + 2 * pad}`);
    const tilesLayer = el("g", {class: "tiles"}, svg);
    for (const k of cells) {
      const [q, r] = cellOf(k);
      const tile = model.tiles.get(k);
      const hex = hexPoints(geo, q, r);
      const pts = points(hex);
      const cls = tile ? `tile tile-${tile.colour}` : "cell-empty";
      const cell = el("polygon", {points: pts, class: cls, "data-cell": k}, tilesLayer);
      el("title", {}, cell, tile ? `${k}: ${NAME[tile.colour]} tile` +
        (typeof tile.confidence === "number" ? `, read with confidence ${tile.confidence.toFixed(2)}` : "") :
        `${k}: no tile`);
      if (tile && tile.colour === "black") el("polygon", {points: pts, fill: "url(#hatch)", class: "hatch"}, tilesLayer);
      if (options.confidence && doubtfulCell(k)) markDoubt(tilesLayer, hex, geo.centre(q, r), HEX);
    }
    drawIslands(el("g", {class: "islands"}, svg), geo, analysis, model.stacks);
    const stacksLayer = el("g", {class: "stacks"}, svg);
    for (const [k, stack] of model.stacks) {
      drawStack(stacksLayer, geo, k, stack, geo.centre(...cellOf(k)), {discOrder: true, confidence: options.confidence});
    }
    if (options.edit) {   // the cell names the notation uses, over the stacks so that none is hidden
      const namesLayer = el("g", {class: "cell-names"}, svg);
      for (const k of cells) {
        const tile = model.tiles.get(k);
        if (!tile && !model.stacks.has(k)) continue;
        const [x, y] = geo.centre(...cellOf(k));
        el("text", {x, y: y + 0.78 * HEX, "font-size": 0.27 * HEX, "text-anchor": "middle",
          class: `cell-name name-${tile ? tile.colour : "none"}`}, namesLayer, k);
      }
    }
    if (options.sides) drawDances(el("g", {class: "dances"}, svg), geo, analysis, options.sides, geo.centre.bind(geo));
    if (options.selected && cells.has(options.selected)) {
      el("polygon", {points: points(hexPoints(geo, ...cellOf(options.selected))), class: "selected"}, svg);
    }
  }

  // The part of the photo to show: the World and its neighbours, unless the whole photo is asked for.
  function photoViewBox(geo, model) {
    const overlay = record.overlay;
    if ($("whole-photo").checked) return [0, 0, overlay.width, overlay.height];
    let minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
    for (const k of editableCells(model)) {
      const c = geo.centre(...cellOf(k));
      if (!c) continue;
      minX = Math.min(minX, c[0]); maxX = Math.max(maxX, c[0]); minY = Math.min(minY, c[1]); maxY = Math.max(maxY, c[1]);
    }
    if (minX === Infinity) return [0, 0, overlay.width, overlay.height];
    const pad = geo.size() * 1.5;
    // tall stacks rise above their cells: keep their tops in view
    for (const k of model.stacks.keys()) {
      const t = geo.top(...cellOf(k));
      if (t) { minY = Math.min(minY, t[1]); minX = Math.min(minX, t[0]); maxX = Math.max(maxX, t[0]); }
    }
    const x0 = Math.max(0, minX - pad), y0 = Math.max(0, minY - pad);
    const x1 = Math.min(overlay.width, maxX + pad), y1 = Math.min(overlay.height, maxY + pad);
    return x1 - x0 < 50 || y1 - y0 < 50 ? [0, 0, overlay.width, overlay.height] : [x0, y0, x1 - x0, y1 - y0];
  }

  // The reading drawn over the photo from vision's pixel coordinates.
  function drawOverlay() {
    const svg = $("overlay");
    const overlay = record.overlay;
    svg.textContent = "";
    const geo = photoGeometry(overlay);
    const model = state.model;
    const s = geo.size();
    const box = photoViewBox(geo, model);
    svg.setAttribute("viewBox", box.map((v) => v.toFixed(1)).join(" "));
    svg.style.aspectRatio = `${box[2]} / ${box[3]}`;
    el("image", {href: svg.dataset.photo, x: 0, y: 0, width: overlay.width, height: overlay.height}, svg);
    if (!$("show-reading").checked) return;
    const tilesLayer = el("g", {class: "tiles"}, svg);
    for (const k of editableCells(model)) {
      const [q, r] = cellOf(k);
      const pts = hexPoints(geo, q, r);
      if (!pts) continue;
      const tile = model.tiles.get(k);
      el("polygon", {points: points(pts), class: tile ? `photo-tile photo-tile-${tile.colour}` : "photo-empty",
        "data-cell": k}, tilesLayer);
      const c = geo.centre(q, r);
      if (tile && !model.stacks.has(k)) {
        el("text", {x: c[0], y: c[1], "font-size": 0.5 * s, "text-anchor": "middle", "dominant-baseline": "central",
          class: `photo-letter photo-letter-${tile.colour}`}, tilesLayer, LETTER[tile.colour]);
      }
      if (doubtfulCell(k)) markDoubt(tilesLayer, pts, c, s);
    }
    const analysis = state.analysis || NO_ANSWER;
    drawIslands(el("g", {class: "islands photo-islands"}, svg), geo, analysis, model.stacks);
    const stacksLayer = el("g", {class: "stacks"}, svg);
    for (const [k, stack] of model.stacks) {
      const [q, r] = cellOf(k);
      const at = geo.top(q, r);
      if (at) drawStack(stacksLayer, geo, k, stack, at, {discOrder: false, confidence: true});
    }
    drawDances(el("g", {class: "dances"}, svg), geo, analysis, dancingSides(), geo.top);
    if (state.selected) {
      const pts = hexPoints(geo, ...cellOf(state.selected));
      if (pts) el("polygon", {points: points(pts), class: "selected"}, svg);
    }
  }

  // ---- the answer ---------------------------------------------------------------------------
  function html(tag, attrs, parent, text) {
    const node = document.createElement(tag);
    for (const [a, v] of Object.entries(attrs || {})) node.setAttribute(a, v);
    if (text !== undefined) node.textContent = text;
    if (parent) parent.appendChild(node);
    return node;
  }

  function describeBuildMoves(moves) {
    const places = moves.filter((m) => m.type === "place").length;
    const parts = [];
    const enlarges = moves.filter((m) => m.type === "enlarge").map((m) => m.text);
    if (enlarges.length) parts.push(`enlarge the World (${enlarges.join(", ")})`);
    if (places) parts.push(`place a disc on any of ${places} empty tile${places > 1 ? "s" : ""}`);
    const tiles = moves.filter((m) => m.type === "tile").length;
    if (tiles) parts.push(`lay a set-up tile (${tiles} cells)`);
    if (moves.some((m) => m.type === "pass")) parts.push("pass");
    return parts.length ? parts.join(", or ") : "no move";
  }

  function renderAnswer() {
    const a = state.analysis;
    const box = $("answer");
    box.textContent = "";
    if (!a) {
      html("p", {class: "error problem"}, box, `This position cannot occur: ${state.problem.replace(/^Invalid position: /, "")}`);
      html("p", {class: "hint"}, box, "The photo was misread: tap a tile or a stack below to correct it (those marked ? are the least sure). The answer appears as soon as the position can occur.");
      $("score").textContent = "";
      $("previews-card").hidden = true;
      return;
    }
    if (a.game_over) {
      const reason = {supply_exhausted: "the last tile is laid", two_passes: "both players passed"}[
        (a.outcome || {}).reason] || "the game has ended";
      const result = a.winner === "draw" ? "a draw" : `${NAME[a.winner]} wins`;
      html("p", {class: "game-over"}, box, `Game over (${reason}): ${result}. No dance is played.`);
    }
    for (const colour of dancingSides()) {
      const part = html("div", {class: `side side-${colour}`, "data-side": colour}, box);
      const heading = state.model.toMove ? `${NAME[colour]} to move` : `If ${NAME[colour]} is to move`;
      html("h2", {}, part, heading);
      const dances = a.forced_dances[colour] || [];
      if (dances.length) {
        html("p", {class: "verdict"}, part,
          dances.length === 1 ? "Forced dance:" : `One of ${dances.length} forced dances:`);
        const list = html("ol", {class: "dances"}, part);
        for (const dance of dances) {
          const item = html("li", {class: `dance-item dance-${colour}`}, list);
          html("span", {class: "notation"}, item, dance.text);
          if (dance.perimeter) html("span", {class: "tag"}, item, "off the World");
          const cells = dance.drops.map((c) => c.join(","));
          if (dance.perimeter) cells[cells.length - 1] += " (off the World, the rest of the stack)";
          html("span", {class: "sowing"}, item,
            `the stack at ${dance.from.join(",")} hits ${dance.target.join(",")}; discs land on ${cells.join(" · ")}`);
        }
        if (a.priority && a.priority[colour]) html("p", {class: "priority"}, part, a.priority[colour]);
      } else {
        html("p", {class: "verdict"}, part, "No forced dance.");
        const moves = (a.build_moves || {})[colour] || [];
        html("p", {class: "build"}, part, `${NAME[colour]} may ${describeBuildMoves(moves)}.`);
      }
    }
    renderUnsureHeights(box, a);
    renderScore();
    renderPreviews();
  }

  // The unsure stacks whose height decides the forced dances of the sides shown: check those first.
  function renderUnsureHeights(box, a) {
    const sides = dancingSides();
    const texts = (dances) => (dances || []).map((d) => d.text).join(" or ");
    const changed = (u) => sides.filter((c) => texts(u.forced_dances[c]) !== texts(a.forced_dances[c]));
    const deciding = (a.unsure_heights || []).filter((u) => changed(u).length);
    if (!deciding.length) return;
    const part = html("div", {class: "unsure-heights"}, box);
    html("p", {}, part, "The answer depends on the height of unsure stacks (marked ?): check these first.");
    const list = html("ul", {}, part);
    for (const u of deciding) {
      const answers = changed(u).map((c) => `${NAME[c]}: ${texts(u.forced_dances[c]) || "no forced dance"}`);
      const k = u.at.join(",");
      const item = html("li", {}, list, u.to
        ? `The stack at ${k}, read as ${counted(u.read, "disc")}, and the one at ${u.to.at.join(",")}, read as ` +
          `${counted(u.to.read, "disc")}: if they have ${u.height} and ${u.to.height}, ${answers.join("; ")} `
        : `The stack at ${k}, read as ${counted(u.read, "disc")}: if it has ${u.height}, ${answers.join("; ")} `);
      button(item, "Check it", () => {
        select(k);
        $("editor").scrollIntoView({block: "nearest", behavior: "smooth"});
      }, {class: "button chip-button", "data-check": k});
    }
    const another = $("second-photo-form");
    if (another) {
      const next = another.dataset.nextPhoto;
      const more = html("p", {}, part, `Or let a ${next} of the table, from another side, read them again: `);
      button(more, `Add a ${next}`, () => {
        another.scrollIntoView({block: "nearest", behavior: "smooth"});
        $("second-photo-input").click();
      }, {class: "button chip-button", id: "ask-second-photo"});
    }
  }

  // One line under the editor, so that a phone user sees the new answer without scrolling up.
  function renderQuickAnswer() {
    const a = state.analysis;
    const box = $("quick-answer");
    if (!a) { box.textContent = "Answer: none yet, the position cannot occur."; return; }
    const parts = dancingSides().map((colour) => {
      const dances = (a.forced_dances[colour] || []).map((d) => d.text);
      return `${NAME[colour]}: ${dances.length ? dances.join(" or ") : "no forced dance"}`;
    });
    if (a.game_over) parts.push("game over");
    parts.push(`score White ${a.score.white} · Black ${a.score.black}`);
    box.textContent = `Answer: ${parts.join("; ")}.`;
  }

  function renderScore() {
    const a = state.analysis;
    const box = $("score");
    box.textContent = "";
    const line = html("p", {class: "score-line"}, box);
    html("span", {class: "score score-white"}, line, `White ${a.score.white}`);
    line.appendChild(document.createTextNode(" · "));
    html("span", {class: "score score-black"}, line, `Black ${a.score.black}`);
    const lead = a.winner === "draw" ? "level" : `${NAME[a.winner]} ${a.game_over ? "wins" : "leads"}`;
    html("span", {class: "lead"}, line, a.game_over && a.winner === "draw" ? " — a draw" : ` — ${lead}`);
    for (const colour of SIDES) {
      const islands = (a.islands[colour] || []).map((isl, i) => (i === 0 ? `${isl.length}×2` : `${isl.length}`));
      html("p", {class: "islands-line"}, box,
        `${NAME[colour]} islands: ${islands.length ? islands.join(" + ") : "none"}`);
    }
  }

  function renderPreviews() {
    const box = $("previews");
    box.textContent = "";
    let any = false;
    for (const colour of dancingSides()) {
      (state.analysis.forced_dances[colour] || []).forEach((dance, i) => {
        any = true;
        const figure = html("figure", {class: "preview"}, box);
        const caption = html("figcaption", {}, figure, `${i + 1}. ${NAME[colour]} ${dance.text}: `);
        if (dance.after && dance.after.position) {
          const svg = document.createElementNS(SVG, "svg");
          svg.setAttribute("class", "diagram small");
          figure.insertBefore(svg, caption);
          const after = modelFromJSON(dance.after.position);
          const side = dance.after.next_side;
          drawDiagram(svg, after, {islands: {}, forced_dances: {[side]: dance.after.next_dances}}, {sides: [side]});
          caption.appendChild(document.createTextNode(
            `then White ${dance.after.score.white} · Black ${dance.after.score.black}` +
            (dance.after.game_over ? " (game over)." : ".") +
            (dance.after.next_dances.length ? ` ${NAME[dance.after.next_side]} must then play ${dance.after.next_dances.map((d) => d.text).join(" or ")}.` : "")));
        } else {
          caption.appendChild(document.createTextNode(
            `no preview: the colours of some discs of the stack at ${dance.from.join(",")} were not read ` +
            "(tap it and set the discs marked ?)."));
        }
      });
    }
    $("previews-card").hidden = !any;
  }

  // ---- warnings from vision -------------------------------------------------------------------
  function renderWarnings() {
    const list = $("warnings");
    list.textContent = "";
    const lowTiles = [...editableCells(state.model)].filter(doubtfulCell).length;
    const lowStacks = [...state.model.stacks.keys()].filter(doubtfulStack).length;
    if (lowTiles || lowStacks) {
      html("li", {}, list, `Unsure: ${counted(lowTiles, "cell")} and ${counted(lowStacks, "stack")} ` +
        "(marked ?). Check them and tap to correct.");
    }
    for (const w of record.reading.warnings || []) {
      if (typeof w === "string") html("li", {}, list, w);
      else if (w.code === "view-from-above") {
        html("li", {}, list, `${w.message}; or add a second photo from another side, or count the discs in reserve and ` +
          "fit the heights to them (both under the diagram).");
      } else if (!String(w.code || "").startsWith("uncertain")) html("li", {}, list, w.message || JSON.stringify(w));
    }
  }

  // ---- corrections --------------------------------------------------------------------------
  function describeCell(k) {
    const tile = state.model.tiles.get(k);
    const stack = state.model.stacks.get(k);
    const where = tile ? `${NAME[tile.colour]} tile` : "no tile";
    if (!stack) return where;
    const discs = stack.discs.map((d) => (d ? LETTER[d] : "?")).join("");
    return `${where}, stack of ${stack.discs.length} (bottom→top ${discs})`;
  }

  function correct(kind, change) {
    const k = state.selected;
    const before = describeCell(k);
    state.history.push(cloneModel(state.model));
    change(state.model);
    const tile = state.model.tiles.get(k);
    const stack = state.model.stacks.get(k);
    tileSuspects.delete(k);
    stackSuspects.delete(k);
    if (tile) delete tile.confidence;
    if (stack) {           // checked by the user: its height is no longer the photo's guess
      delete stack.confidence;
      delete stack.chances;
    }
    delete state.model.rest.reserves;
    delete state.model.rest.reserves_counted;
    delete state.model.rest.tiles_left;
    state.corrections.push({cell: cellOf(k), kind, before, after: describeCell(k), at: new Date().toISOString()});
    update();
  }

  function setTile(colour) {
    correct("tile", (model) => {
      if (colour) model.tiles.set(state.selected, {colour});
      else model.tiles.delete(state.selected);
    });
  }

  function cycleTile() {
    const tile = state.model.tiles.get(state.selected);
    setTile(!tile ? "white" : tile.colour === "white" ? "black" : null);
  }

  function editStack(change) {
    correct("stack", (model) => {
      const stack = model.stacks.get(state.selected) || {discs: []};
      change(stack.discs);
      if (stack.discs.length) model.stacks.set(state.selected, stack);
      else model.stacks.delete(state.selected);
    });
  }

  // A height misread is fixed below the top disc, which is the one a photo shows best.
  const lowerStack = () => editStack((discs) => discs.splice(Math.max(0, discs.length - 2), 1));
  const higherStack = () => editStack((discs) => discs.splice(discs.length - 1, 0, null));
  const removeStack = () => editStack((discs) => discs.splice(0));

  function button(parent, label, onClick, attrs) {
    const b = html("button", Object.assign({type: "button", class: "button"}, attrs || {}), parent, label);
    b.addEventListener("click", onClick);
    return b;
  }

  function renderEditor() {
    const box = $("editor");
    box.textContent = "";
    const k = state.selected;
    box.hidden = !k;
    if (!k) return;
    html("p", {class: "editing"}, box, `Editing: ${describeCell(k)}`);
    const tile = state.model.tiles.get(k);
    const tileRow = html("div", {class: "row tile-buttons"}, box);
    for (const [colour, label] of [["white", "White tile"], ["black", "Black tile"], [null, "No tile"]]) {
      const active = tile ? tile.colour === colour : colour === null;
      button(tileRow, label, () => setTile(colour), {"aria-pressed": String(active), "data-tile": colour || "none"});
    }
    const stack = state.model.stacks.get(k);
    const stackRow = html("div", {class: "row stack-buttons"}, box);
    if (!stack) {
      button(stackRow, "Add a White disc", () => editStack((d) => d.push("white")), {"data-action": "add-white"});
      button(stackRow, "Add a Black disc", () => editStack((d) => d.push("black")), {"data-action": "add-black"});
      return;
    }
    const columns = html("div", {class: "stack-editor"}, box);
    const chips = html("div", {class: "chips"}, columns);
    html("span", {class: "hint"}, chips, "Discs, top first (tap to change):");
    for (let i = stack.discs.length - 1; i >= 0; i -= 1) {
      const disc = stack.discs[i];
      const isTop = i === stack.discs.length - 1;
      const label = `${disc ? NAME[disc] : "unknown"}${isTop ? " (top)" : ""}`;
      button(chips, label, () => editStack((discs) => {
        const order = isTop ? ["white", "black"] : ["white", "black", null];
        discs[i] = order[(order.indexOf(discs[i]) + 1) % order.length];
      }), {class: `button chip-button disc-${disc || "unknown"}`, "data-disc": i});
    }
    columns.appendChild(stackRow);
    button(stackRow, "Height −1", lowerStack, {"data-action": "lower"});
    button(stackRow, "Height +1", higherStack, {"data-action": "higher"}).disabled = stack.discs.length >= MAX_HEIGHT;
    button(stackRow, "Remove stack", removeStack, {"data-action": "remove"});
  }

  function select(k) {
    if (state.selected === k && !state.model.stacks.has(k)) {
      cycleTile();            // a second tap on an empty cell cycles white / black / no tile
      return;
    }
    state.selected = k;
    renderEditor();
    drawAll();
  }

  function onTap(event) {
    const target = event.target.closest("[data-cell]");
    if (!target) return;
    select(target.getAttribute("data-cell"));
    // a tap on the photo: bring the editor (under the diagram) into view
    if (event.currentTarget.id === "overlay") $("editor").scrollIntoView({block: "nearest", behavior: "smooth"});
  }

  // ---- heights fitted to the reserves the players count ---------------------------------------
  function describeFit(change) {
    const parts = [];
    if (change.height !== change.read) parts.push(`read as ${counted(change.read, "disc")}, now ${change.height}`);
    if (change.unread) parts.push(`${counted(change.unread, "side colour")} left unread`);
    return `the stack at ${change.at.join(",")}: ${parts.join(", ")}`;
  }

  function showReserves() {
    const reserves = state.model.rest.reserves;
    for (const colour of SIDES) {
      $(`reserve-${colour}`).value = reserves && reserves[colour] !== undefined ? String(reserves[colour]) : "";
    }
  }

  // The discs each side has in reserve as chosen in the form, or null while a count is not chosen.
  function chosenReserves() {
    const chosen = SIDES.map((colour) => $(`reserve-${colour}`).value);
    return chosen.includes("") ? null : {white: Number(chosen[0]), black: Number(chosen[1])};
  }

  const discsOnTable = (reserves) => SET_DISCS - reserves.white - reserves.black;

  // Whether the stacks hold the discs the reserves counted leave on the table; after a fit, what it changed.
  function renderReservesNote() {
    const reserves = chosenReserves();
    const note = $("reserves-note");
    if (!reserves) { note.textContent = state.fitNote; return; }
    const wanted = discsOnTable(reserves);
    const held = [...state.model.stacks.values()].reduce((n, stack) => n + stack.discs.length, 0);
    note.textContent = held === wanted ? (state.fitNote || `The stacks hold the ${wanted} discs on the table.`)
      : `The stacks hold ${counted(held, "disc")}, but with these reserves ${wanted} are on the table: ` +
        "fit the heights (the stacks you corrected keep theirs), or check the counts.";
  }

  async function fitHeights(event) {
    event.preventDefault();
    const note = $("reserves-note");
    const reserves = chosenReserves();
    if (!reserves) { note.textContent = "Choose both counts first."; return; }
    let response, body;
    try {
      response = await fetch("/api/fit-heights", {
        method: "POST", headers: {"Content-Type": "application/json"},
        body: JSON.stringify({position: modelToJSON(state.model), reserves}),
      });
      body = await response.json();
    } catch (err) {
      note.textContent = "The server cannot be reached.";
      return;
    }
    if (!response.ok) { note.textContent = body.error; return; }
    state.history.push(cloneModel(state.model));
    state.model = modelFromJSON(body.position);
    const onTable = discsOnTable(reserves);
    state.fitNote = body.changes.length
      ? `Fitted to ${onTable} discs on the table: ${body.changes.map(describeFit).join("; ")}. Marked ?: check them.`
      : `The stacks as they are hold the ${onTable} discs on the table: nothing to change.`;
    state.corrections.push({kind: "reserves", after: `White ${reserves.white}, Black ${reserves.black} in reserve`,
      changes: body.changes, at: new Date().toISOString()});
    update();
  }

  // ---- talking to the server ----------------------------------------------------------------
  let saveTimer = null;
  function scheduleSave() {
    clearTimeout(saveTimer);
    $("save-state").textContent = "saving…";
    saveTimer = setTimeout(async () => {
      try {
        const response = await fetch(`/api/analyses/${record.id}/position`, {
          method: "PUT", headers: {"Content-Type": "application/json"},
          body: JSON.stringify({position: modelToJSON(state.model), corrections: state.corrections.slice(-1000)}),
        });
        $("save-state").textContent = response.ok ? "corrections saved" : "not saved: " + (await response.json()).error;
      } catch (err) {
        $("save-state").textContent = "not saved: the server cannot be reached";
      }
    }, 400);
  }

  async function update() {
    const started = performance.now();
    const ticket = ++state.request;
    $("undo").disabled = !state.history.length;
    renderEditor();
    drawAll();
    let response, body;
    try {
      response = await fetch("/api/rules/analyze", {
        method: "POST", headers: {"Content-Type": "application/json"},
        body: JSON.stringify(modelToJSON(state.model)),
      });
      body = await response.json();
    } catch (err) {
      if (ticket === state.request) $("timing").textContent = "The server cannot be reached.";
      return;
    }
    if (ticket !== state.request) return;   // a newer correction is on its way
    state.analysis = response.ok ? body : null;
    state.problem = response.ok ? null : body.error.replace(/^Invalid position: /, "");
    renderAll();
    const ms = performance.now() - started;
    timings.corrections.push(ms);
    document.body.dataset.updates = String(timings.corrections.length);
    $("timing").textContent = `Answer updated in ${Math.round(ms)} ms.`;
    if (response.ok) scheduleSave();
  }

  function drawAll() {
    drawDiagram($("diagram"), state.model, state.analysis || NO_ANSWER,
      {edit: true, confidence: true, sides: dancingSides(), selected: state.selected});
    drawOverlay();
  }

  function renderAll() {
    for (const radio of document.querySelectorAll("input[name=side]")) {
      radio.checked = radio.value === (state.model.toMove || "unknown");
    }
    renderAnswer();
    renderQuickAnswer();
    renderWarnings();
    renderReservesNote();
    renderEditor();
    drawAll();
  }

  // ---- wiring ------------------------------------------------------------------------------
  $("diagram").addEventListener("click", onTap);
  $("overlay").addEventListener("click", onTap);
  $("show-reading").addEventListener("change", drawOverlay);
  $("whole-photo").addEventListener("change", drawOverlay);
  for (const radio of document.querySelectorAll("input[name=side]")) {
    radio.addEventListener("change", () => {
      state.history.push(cloneModel(state.model));
      state.model.toMove = radio.value === "unknown" ? null : radio.value;
      state.corrections.push({kind: "to_move", after: radio.value, at: new Date().toISOString()});
      update();
    });
  }
  $("undo").addEventListener("click", () => {
    if (!state.history.length) return;
    state.model = state.history.pop();
    state.corrections.push({kind: "undo", at: new Date().toISOString()});
    update();
  });
  $("revert").addEventListener("click", () => {
    state.history.push(cloneModel(state.model));
    const toMove = state.model.toMove;
    state.model = modelFromJSON(record.reading_position);
    state.model.toMove = toMove;
    state.corrections.push({kind: "revert", at: new Date().toISOString()});
    state.selected = null;
    update();
  });
  // Keyboard on a desktop: W / B / N set the selected cell's tile, + and − its stack's height,
  // Delete removes the stack, Escape deselects, Ctrl+Z undoes.
  document.addEventListener("keydown", (event) => {
    if (event.target.closest("input, select, textarea")) return;
    if ((event.ctrlKey || event.metaKey) && event.key === "z") { $("undo").click(); event.preventDefault(); return; }
    if (!state.selected || event.ctrlKey || event.metaKey || event.altKey) return;
    const stack = state.model.stacks.get(state.selected);
    const actions = {
      w: () => setTile("white"), b: () => setTile("black"), n: () => setTile(null),
      "+": () => stack && stack.discs.length < MAX_HEIGHT && higherStack(),
      "=": () => stack && stack.discs.length < MAX_HEIGHT && higherStack(),
      "-": () => stack && lowerStack(),
      Delete: () => stack && removeStack(),
      Escape: () => { state.selected = null; renderEditor(); drawAll(); },
    };
    const action = actions[event.key.length === 1 ? event.key.toLowerCase() : event.key];
    if (action) { action(); event.preventDefault(); }
  });
  $("reserves-form").addEventListener("submit", fitHeights);
  for (const colour of SIDES) $(`reserve-${colour}`).addEventListener("change", renderReservesNote);
  $("copy-link").addEventListener("click", () => {
    if (navigator.clipboard) navigator.clipboard.writeText($("permalink").href);
  });

  showReserves();
  renderAll();
  const uploadStart = Number(sessionStorage.getItem("exxit-upload-start"));
  sessionStorage.removeItem("exxit-upload-start");
  timings.drawn = Date.now();
  if (uploadStart) timings.uploadToDrawn = timings.drawn - uploadStart;
  document.body.dataset.ready = "1";
})();
