"""The web app's static files: plain ES modules and CSS, no build step (see bunko.http.web)."""
