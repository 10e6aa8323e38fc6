// MathJax configuration for the maths that pymdownx.arithmatex (generic mode) marks up.
// Loaded before docs/assets/mathjax/tex-svg-full.js, which is served from this site: no CDN.
window.MathJax = {
  tex: {
    inlineMath: [["\\(", "\\)"]],
    displayMath: [["\\[", "\\]"]],
    processEscapes: true,
    processEnvironments: true,
  },
  options: {
    ignoreHtmlClass: ".*|",
    processHtmlClass: "arithmatex",
  },
};
