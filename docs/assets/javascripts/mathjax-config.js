// MathJax 3 configuration, loaded before docs/assets/mathjax/tex-svg-full.js (served from this
// site: no CDN). Sphinx writes every formula, from the Markdown pages ($...$, $$...$$ through
// myst-parser) and from the docstrings (:math:), as \(...\) or \[...\] inside an element of class
// "math"; MathJax typesets those elements and nothing else on the page.
window.MathJax = {
  tex: {
    inlineMath: [["\\(", "\\)"]],
    displayMath: [["\\[", "\\]"]],
    processEscapes: true,
    processEnvironments: true,
  },
  options: {
    ignoreHtmlClass: ".*|",
    processHtmlClass: "math",
  },
};
