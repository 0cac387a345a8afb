// Starts Swagger UI over the gateway's OpenAPI document. A file rather
// than an inline script: the page's Content-Security-Policy allows scripts
// from the gateway only.
window.ui = SwaggerUIBundle({
  url: "../openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  // A key typed into "Authorize" lives in this tab's memory only: kept in
  // localStorage, any script that ever ran on this origin could read it.
  persistAuthorization: false,
  // No badge fetched from validator.swagger.io: the page talks to the
  // gateway alone.
  validatorUrl: "none",
});
