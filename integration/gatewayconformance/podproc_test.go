package gatewayconformance

import (
	"context"
	"log/slog"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// TestPodEnvironment: a container's environment has its plain values,
// the downward API fields of the Pod, Secret keys, and a value naming a
// file under a mounted Secret points where the Secret was written; a
// field the simulator does not fill is an error naming it.
func TestPodEnvironment(t *testing.T) {
	cs := fake.NewClientset(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "certs"},
		Data:       map[string][]byte{"tls.crt": []byte("CERT"), "token": []byte("T")},
	})
	r := NewPodProcesses(cs, "echo-basic", t.TempDir(), slog.New(slog.DiscardHandler))
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-1", UID: "u1"},
		Spec: corev1.PodSpec{NodeName: "node", Volumes: []corev1.Volume{{Name: "vol", VolumeSource: corev1.VolumeSource{
			Secret: &corev1.SecretVolumeSource{SecretName: "certs", Items: []corev1.KeyToPath{{Key: "tls.crt", Path: "crt"}}},
		}}}},
	}
	c := corev1.Container{Name: "web", VolumeMounts: []corev1.VolumeMount{{Name: "vol", MountPath: "/etc/secret-volume"}}, Env: []corev1.EnvVar{
		{Name: "PLAIN", Value: "x"},
		{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		{Name: "NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
		{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
		{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "certs"}, Key: "token"}}},
		{Name: "TLS_SERVER_CERT", Value: "/etc/secret-volume/crt"},
	}}
	pod.Spec.Containers = []corev1.Container{c}
	dir := t.TempDir()
	mounts, err := r.writeVolumes(context.Background(), pod, dir)
	if err != nil {
		t.Fatal(err)
	}
	env, err := r.env(context.Background(), pod, c, netip.MustParseAddr("10.244.0.7"), mounts)
	if err != nil {
		t.Fatal(err)
	}
	certFile := filepath.Join(dir, "volumes", "vol", "crt")
	want := []string{"PLAIN=x", "POD_NAME=web-1", "NAMESPACE=ns", "POD_IP=10.244.0.7", "TOKEN=T", "TLS_SERVER_CERT=" + certFile}
	if !slices.Equal(env, want) {
		t.Errorf("env = %q, want %q", env, want)
	}

	c.Env = []corev1.EnvVar{{Name: "CPU", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.cpu"}}}}
	if _, err := r.env(context.Background(), pod, c, netip.MustParseAddr("10.244.0.7"), mounts); err == nil || !strings.Contains(err.Error(), "env CPU") {
		t.Errorf("a resource field: err = %v, want one naming env CPU", err)
	}
}

// TestLineLogSince: the log endpoint returns the complete lines written
// at or after the time asked, and a line still being written only once
// it ends.
func TestLineLogSince(t *testing.T) {
	var l lineLog
	_, _ = l.Write([]byte("old\n"))
	mid := time.Now()
	for l.lines[0].at.Equal(mid) {
		mid = time.Now()
	}
	_, _ = l.Write([]byte("new 1\nnew"))
	if got := string(l.since(mid)); got != "new 1\n" {
		t.Errorf("since(mid) = %q, want the one complete new line", got)
	}
	_, _ = l.Write([]byte(" 2\n"))
	if got := string(l.since(mid)); got != "new 1\nnew 2\n" {
		t.Errorf("since(mid) = %q, want both new lines", got)
	}
	if got := string(l.since(time.Time{})); got != "old\nnew 1\nnew 2\n" {
		t.Errorf("since(zero) = %q, want every line", got)
	}
}
