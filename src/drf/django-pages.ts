/** Django 3.2's built-in error pages with DEBUG=False and no error templates installed. */

function errorPage(title: string, details: string): Buffer {
  return Buffer.from(
    `\n<!doctype html>\n<html lang="en">\n<head>\n  <title>${title}</title>\n</head>\n<body>\n  <h1>${title}</h1><p>${details}</p>\n</body>\n</html>\n`,
  );
}

/** `page_not_found` falls back to this template and sets a bare `text/html` Content-Type. */
export const NOT_FOUND_PAGE = errorPage('Not Found', 'The requested resource was not found on this server.');
export const BAD_REQUEST_PAGE = errorPage('Bad Request (400)', '');
export const SERVER_ERROR_PAGE = errorPage('Server Error (500)', '');
export const DJANGO_ERROR_CONTENT_TYPE = 'text/html';
/** HttpResponse's default, used by the APPEND_SLASH redirect. */
export const DJANGO_DEFAULT_CONTENT_TYPE = 'text/html; charset=utf-8';
