/* The header's menu buttons (chapter list, page contents) open their sidebars.
 *
 * pydata-sphinx-theme 0.17.1 and sphinx-book-theme 1.3.0 both attach their handlers to the
 * first `.primary-toggle` and `.secondary-toggle` of the page (pydata-sphinx-theme#2451):
 * the theme's own navbar icons, hidden in this layout. The buttons a reader sees are the
 * book theme's, in the article header, and get no handler. Forward their clicks.
 */
document.addEventListener("DOMContentLoaded", () => {
  for (const kind of ["primary-toggle", "secondary-toggle"]) {
    const [wired, ...visible] = document.querySelectorAll(`.${kind}`);
    if (!wired) continue;
    for (const button of visible) {
      button.addEventListener("click", (event) => {
        event.preventDefault();
        event.stopPropagation();
        wired.click();
      });
    }
  }
});
