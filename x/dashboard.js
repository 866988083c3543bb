// loopx dashboard: fills the todo table and a todo's history from the data files beside the page,
// loaded as scripts (a page opened from disk may not fetch), and filters the todos. No network.
(function () {
  "use strict";
  var data = window.LOOPX_DASHBOARD;
  var chunks = Object.create(null);
  var waiting = Object.create(null);
  var todos = [];
  var taken = Object.create(null);  // the todo chunks already in `todos`
  var loadedChunks = 0;
  var loadingAll = null;  // one load of every todo chunk, shared by whoever asks first
  var shown = 100;

  window.loopxChunk = function (name, rows) {
    chunks[name] = rows;
    (waiting[name] || []).forEach(function (done) { done(rows); });
    delete waiting[name];
  };

  function load(name) {
    return new Promise(function (resolve, reject) {
      if (chunks[name]) { resolve(chunks[name]); return; }
      if (waiting[name]) { waiting[name].push(resolve); return; }
      waiting[name] = [resolve];
      var script = document.createElement("script");
      script.src = "data/" + name + ".js";
      script.onerror = function () {
        delete waiting[name];
        reject(new Error("missing data file data/" + name + ".js"));
      };
      document.body.appendChild(script);
    });
  }

  function text(tag, value, cls) {
    var el = document.createElement(tag);
    el.textContent = value == null ? "" : String(value);
    if (cls) { el.className = cls; }
    return el;
  }

  function source(eventId, commit) {
    var label = (eventId || "no source event") + (commit ? " · " + commit.slice(0, 12) : "");
    var el;
    if (commit && data.commit_url) {
      el = document.createElement("a");
      el.href = data.commit_url.split("{commit}").join(commit);
    } else {
      el = document.createElement("span");
    }
    el.className = "src";
    el.textContent = label;
    if (eventId) { el.dataset.event = eventId; }
    if (commit) { el.dataset.commit = commit; }
    return el;
  }

  function filters() {
    var out = {};
    ["state", "agent", "priority", "class"].forEach(function (name) {
      out[name] = document.getElementById("filter-" + name).value;
    });
    return out;
  }

  function matches(row, f) {
    return (!f.state || row.state === f.state) && (!f.agent || row.agent_id === f.agent) &&
      (!f.priority || row.priority === f.priority) && (!f.class || row.task_class === f.class);
  }

  function render() {
    var f = filters();
    var body = document.querySelector("#todo-table tbody");
    var rows = todos.filter(function (row) { return matches(row, f); });
    body.textContent = "";
    rows.slice(0, shown).forEach(function (row) {
      var tr = document.createElement("tr");
      tr.className = "todo state-" + row.state;
      tr.dataset.todo = row.todo_id;
      tr.dataset.state = row.state;
      var link = document.createElement("a");
      link.href = "#todo=" + encodeURIComponent(row.todo_id);
      link.textContent = row.todo_id;
      var first = document.createElement("td");
      first.appendChild(link);
      tr.appendChild(first);
      tr.appendChild(text("td", row.state, "state"));
      tr.appendChild(text("td", row.agent_id || ""));
      tr.appendChild(text("td", row.priority));
      tr.appendChild(text("td", row.task_class));
      tr.appendChild(text("td", row.text));
      var src = document.createElement("td");
      src.appendChild(source(row.source_event_id, row.commit));
      tr.appendChild(src);
      body.appendChild(tr);
    });
    var all = loadedChunks === data.todo_chunks;
    document.getElementById("todo-count").textContent =
      rows.length + (all ? "" : "+") + " of " + data.todo_count + " todos shown by these filters" +
      (rows.length > shown ? " (first " + shown + ")" : "");
    document.getElementById("more").hidden = rows.length <= shown;
  }

  function options() {
    var values = { state: Object.create(null), agent: Object.create(null), priority: Object.create(null), "class": Object.create(null) };
    todos.forEach(function (row) {
      values.state[row.state] = 1;
      if (row.agent_id) { values.agent[row.agent_id] = 1; }
      values.priority[row.priority] = 1;
      values["class"][row.task_class] = 1;
    });
    Object.keys(values).forEach(function (name) {
      var select = document.getElementById("filter-" + name);
      var have = Object.create(null);
      Array.prototype.forEach.call(select.options, function (o) { have[o.value] = 1; });
      Object.keys(values[name]).sort().forEach(function (value) {
        if (!have[value]) { select.appendChild(text("option", value)).value = value; }
      });
    });
  }

  function take(name, rows) {
    if (taken[name]) { return; }
    taken[name] = true;
    todos = todos.concat(rows);
    loadedChunks += 1;
    options();
  }

  function loadAll() {
    if (!loadingAll) {
      var names = [];
      for (var i = 0; i < data.todo_chunks; i++) { names.push("todos-" + i); }
      loadingAll = Promise.all(names.map(load)).then(function (all) {
        all.forEach(function (rows, i) { take(names[i], rows); });
      });
    }
    return loadingAll;
  }

  function failed(error) {
    var count = document.getElementById("todo-count");
    count.textContent = "could not load the todos: " + error.message;
  }

  function chunkOf(todoId) {
    // the same as views/dashboard.py history_chunk: the first four hex digits of the SHA-1 of the id
    return sha1hex(todoId).slice(0, 4);
  }

  function showHistory() {
    var match = /^#todo=(.+)$/.exec(window.location.hash);
    var box = document.getElementById("history");
    if (!match) { box.hidden = true; return; }
    var todoId;
    try { todoId = decodeURIComponent(match[1]); } catch (e) { box.hidden = true; return; }
    var name = "history-" + ("0" + (parseInt(chunkOf(todoId), 16) % data.history_chunks)).slice(-2);
    load(name).then(function (histories) {
      var list = document.getElementById("history-list");
      list.textContent = "";
      document.getElementById("history-title").textContent = "History of " + todoId;
      (histories[todoId] || []).forEach(function (row) {
        var li = text("li", row.at + " " + row.kind + " " + (row.agent_id || "a person") +
          (row.summary ? ": " + row.summary : ""), "history-event");
        li.appendChild(source(row.event_id, row.commit));
        list.appendChild(li);
      });
      box.hidden = false;
    }, function (error) {
      document.getElementById("history-title").textContent = "No history for " + todoId + ": " + error.message;
      document.getElementById("history-list").textContent = "";
      box.hidden = false;
    });
  }

  // SHA-1 of a UTF-8 string (FIPS 180-4), only to name the chunk a todo's history is in
  function sha1hex(str) {
    var bytes = unescape(encodeURIComponent(str));
    var words = [], i;
    for (i = 0; i < bytes.length; i++) { words[i >> 2] |= bytes.charCodeAt(i) << (24 - (i % 4) * 8); }
    words[bytes.length >> 2] |= 0x80 << (24 - (bytes.length % 4) * 8);
    words[(((bytes.length + 8) >> 6) + 1) * 16 - 1] = bytes.length * 8;
    var h = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0];
    for (var block = 0; block < words.length; block += 16) {
      var w = [], a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
      for (i = 0; i < 80; i++) {
        w[i] = i < 16 ? (words[block + i] | 0) : rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
        var f = i < 20 ? (b & c) | (~b & d) : i < 40 ? b ^ c ^ d : i < 60 ? (b & c) | (b & d) | (c & d) : b ^ c ^ d;
        var k = i < 20 ? 0x5a827999 : i < 40 ? 0x6ed9eba1 : i < 60 ? 0x8f1bbcdc : 0xca62c1d6;
        var t = (rotl(a, 5) + f + e + k + w[i]) | 0;
        e = d; d = c; c = rotl(b, 30); b = a; a = t;
      }
      h = [(h[0] + a) | 0, (h[1] + b) | 0, (h[2] + c) | 0, (h[3] + d) | 0, (h[4] + e) | 0];
    }
    return h.map(function (x) { return ("00000000" + (x >>> 0).toString(16)).slice(-8); }).join("");
  }

  function rotl(x, n) { return (x << n) | (x >>> (32 - n)); }

  document.getElementById("filters").addEventListener("change", function () {
    loadAll().then(render, failed);
  });
  document.getElementById("more").addEventListener("click", function () {
    shown += 100;
    loadAll().then(render, failed);
  });
  window.addEventListener("hashchange", showHistory);
  load("todos-0").then(function (rows) { take("todos-0", rows); render(); showHistory(); }, failed);
})();
