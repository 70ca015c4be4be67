"use strict";
(function () {
  /* A legend entry switches its series (path, points or dots) on and off. */
  function toggle(button) {
    var on = button.getAttribute("aria-pressed") !== "true";
    button.setAttribute("aria-pressed", on ? "true" : "false");
    var figure = button.closest("figure");
    var chart = figure && figure.querySelector("svg.chart");
    if (!chart) return;
    var index = button.getAttribute("data-series");
    chart.querySelectorAll("[data-series]").forEach(function (element) {
      if (element.getAttribute("data-series") === index) element.classList.toggle("off", !on);
    });
  }
  document.querySelectorAll("button.legend-item").forEach(function (button) {
    button.addEventListener("click", function () { toggle(button); });
  });
  /* The hovered time column is highlighted; its title is the browser's tooltip. */
  document.querySelectorAll("svg.chart").forEach(function (chart) {
    var lit = null;
    function light(element) {
      if (lit) lit.classList.remove("lit");
      lit = element;
      if (lit) lit.classList.add("lit");
    }
    chart.addEventListener("mouseover", function (event) {
      var target = event.target;
      var column = target.parentNode && target.parentNode.classList && target.parentNode.classList.contains("cols");
      light(column ? target : null);
    });
    chart.addEventListener("mouseleave", function () { light(null); });
  });
})();
