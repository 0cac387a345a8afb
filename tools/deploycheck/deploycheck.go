// Package deploycheck holds checks of the deployment files that cannot run
// here for real (there is no Docker engine or Kubernetes cluster on the
// build machines): the compose file must load, every service it builds
// must have a Dockerfile that builds the right Go package, and the Helm
// chart in deploy/helm/groundcrew must lint, render its value sets into
// objects that decode strictly into the Kubernetes API types with probes,
// limits and non-root security, and refuse the combinations that cannot
// work.
package deploycheck
