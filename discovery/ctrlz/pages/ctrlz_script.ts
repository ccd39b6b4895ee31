/**
 * The ControlZ pages' script, served as `/static/ctrlz.js` (the Content-Security-Policy allows no inline
 * script). It only adds to server-rendered pages: scope changes through `PUT /scopej/<scope>`, live memory
 * with a chart of the last five minutes, and metric search as one types. Plain ES2020, no build step.
 *
 * @module
 */

/** The script, as served. */
export const CTRLZ_SCRIPT_SOURCE = `"use strict";
(function () {
  function formatBytes(bytes) {
    var units = ["B", "KiB", "MiB", "GiB", "TiB"], value = bytes, unit = 0;
    while (Math.abs(value) >= 1024 && unit < units.length - 1) { value /= 1024; unit++; }
    return unit === 0 ? value + " B" : value.toFixed(1) + " " + units[unit];
  }

  function setStatus(element, text, good) {
    element.textContent = text;
    element.className = "status " + (good ? "good" : "bad");
  }

  document.querySelectorAll("form.scope-form").forEach(function (form) {
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var scope = form.dataset.scope;
      var status = document.getElementById("scope-status");
      var body = {};
      Array.prototype.forEach.call(form.elements, function (field) {
        if (field.name === "output_level" || field.name === "stack_trace_level") body[field.name] = field.value;
        if (field.name === "log_callers") body.log_callers = field.checked;
      });
      fetch("/scopej/" + encodeURIComponent(scope), {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      }).then(function (response) {
        return response.json().then(function (answer) {
          if (!response.ok) {
            setStatus(status, "Not changed: " + (answer.error || ("HTTP " + response.status)), false);
            return;
          }
          setStatus(status, "Scope " + answer.name + ": output level " + answer.output_level +
            ", stack-trace level " + answer.stack_trace_level + ", log callers " + answer.log_callers, true);
        });
      }).catch(function (error) {
        setStatus(status, "Not changed: " + error.message, false);
      });
    });
  });

  var memory = document.getElementById("memory");
  if (memory) {
    var history = { heapUsed: [], rss: [] };
    var keep = 150;
    var draw = function () {
      var all = history.heapUsed.concat(history.rss);
      var top = Math.max.apply(null, all.concat([1]));
      ["heapUsed", "rss"].forEach(function (key) {
        var values = history[key], step = values.length > 1 ? 600 / (keep - 1) : 600, d = "";
        var offset = keep - values.length;
        values.forEach(function (v, i) {
          d += (i === 0 ? "M" : "L") + ((offset + i) * step).toFixed(1) + " " + (156 - (v / top) * 152).toFixed(1) + " ";
        });
        var path = document.querySelector('[data-series="' + key + '"]');
        if (path) path.setAttribute("d", d.trim());
      });
      var scale = document.getElementById("memory-scale");
      if (scale) scale.textContent = "(scale 0–" + formatBytes(top) + ", one point every 2 s)";
    };
    var poll = function () {
      fetch("/memj/").then(function (r) { return r.json(); }).then(function (usage) {
        Object.keys(usage).forEach(function (key) {
          var cell = memory.querySelector('[data-mem="' + key + '"]');
          if (cell) cell.textContent = formatBytes(usage[key]);
          if (history[key]) {
            history[key].push(usage[key]);
            if (history[key].length > keep) history[key].shift();
          }
        });
        draw();
      }).catch(function () {});
    };
    poll();
    setInterval(poll, 2000);
  }

  var query = document.getElementById("metric-query");
  if (query) {
    var lines = Array.prototype.slice.call(document.querySelectorAll(".metric-line"));
    var count = document.getElementById("metric-count");
    var nameOf = function (line) {
      return line.charAt(0) === "#" ? (line.split(" ")[2] || "") : line.split(/[{\\s]/)[0];
    };
    query.addEventListener("input", function () {
      var q = query.value.trim().toLowerCase(), samples = 0;
      lines.forEach(function (span) {
        var text = span.textContent;
        var shown = q === "" || nameOf(text).toLowerCase().indexOf(q) >= 0;
        span.hidden = !shown;
        if (shown && text.charAt(0) !== "#") samples++;
      });
      if (count) count.textContent = samples + " samples";
    });
  }
})();
`;
