// Package deploycheck holds checks of the deployment files that cannot run
// here for real (there is no Docker engine on the build machines): the
// compose file must load, and every service it builds must have a
// Dockerfile that builds the right Go package.
package deploycheck
