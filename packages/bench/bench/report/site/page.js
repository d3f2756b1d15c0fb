"use strict";
// Sorting the results tables, picking the two frameworks of each code view, and the learning
// curves' legend. The page is complete without this script: it only reorders rows, shows or
// hides pre-rendered code and hides or shows a curve drawn in the page.
(function () {
  function sortKey(cell) {
    const value = cell ? cell.dataset.sort : undefined;
    if (value === undefined || value === "") return null;  // no figure: last either way
    const n = Number(value);
    return Number.isNaN(n) ? value.toLowerCase() : n;
  }

  function compare(a, b, ascending) {
    if (a === null || b === null) return (a === null) - (b === null);
    const order = a < b ? -1 : a > b ? 1 : 0;
    return ascending ? order : -order;
  }

  function sortable(table) {
    const heads = Array.from(table.querySelectorAll("thead th[data-sort-index]"));
    heads.forEach(function (th) {
      const button = document.createElement("button");
      button.type = "button";
      while (th.firstChild) button.appendChild(th.firstChild);
      th.appendChild(button);
      button.addEventListener("click", function () {
        const index = Number(th.dataset.sortIndex);
        const ascending = th.getAttribute("aria-sort") !== "ascending";
        heads.forEach(function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        const body = table.tBodies[0];
        const rows = Array.from(body.rows);
        rows.sort(function (a, b) {
          return compare(sortKey(a.cells[index]), sortKey(b.cells[index]), ascending);
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
  }

  function rosetta(section) {
    const selects = Array.from(section.querySelectorAll("select[data-side]"));
    const table = section.querySelector("table.rosetta-code");
    const previous = selects.map(function (s) { return s.value; });

    function show() {
      const sources = selects.map(function (s) { return s.selectedOptions[0].dataset.source; });
      const names = selects.map(function (s) { return s.value; });
      table.querySelectorAll("[data-src]").forEach(function (el) {
        el.hidden = sources.indexOf(el.dataset.src) < 0;
      });
      table.querySelectorAll("tr").forEach(function (row) {  // left column first
        sources.forEach(function (src) {
          const cell = row.querySelector(':scope > [data-src="' + src + '"]');
          if (cell) row.appendChild(cell);
        });
      });
      section.querySelectorAll(".switches[data-fw]").forEach(function (el) {
        el.hidden = names.indexOf(el.dataset.fw) < 0;
      });
      section.querySelector(".same-source").hidden = sources[0] !== sources[1];
    }

    selects.forEach(function (select, i) {
      select.addEventListener("change", function () {
        const other = selects[1 - i];
        if (other.value === select.value) other.value = previous[i];  // same pick: swap
        previous[0] = selects[0].value;
        previous[1] = selects[1].value;
        show();
      });
    });
    show();
  }

  function curves(figure) {  // a legend entry hides or shows its line in both charts
    figure.querySelectorAll(".legend button[data-series]").forEach(function (button) {
      button.addEventListener("click", function () {
        const shown = button.getAttribute("aria-pressed") !== "true";
        button.setAttribute("aria-pressed", shown ? "true" : "false");
        const selector = 'g.series[data-series="' + button.dataset.series + '"]';
        figure.querySelectorAll(selector).forEach(function (series) {
          if (shown) series.removeAttribute("hidden");
          else series.setAttribute("hidden", "");
        });
      });
    });
  }

  document.querySelectorAll("table.sortable").forEach(sortable);
  document.querySelectorAll("section.rosetta").forEach(rosetta);
  document.querySelectorAll("figure.curves").forEach(curves);
})();
