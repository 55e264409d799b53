package apiserver

import (
	"context"
	"fmt"
	"path/filepath"

	authv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// CreateAll creates objects of any kind the API server serves (an
// object that exists already is left as it is), mapping kinds to
// resources through discovery. A request the server answers with "retry"
// (Retryable: a timeout in the server, throttling) is sent again until it
// succeeds or ctx ends (5 minutes when ctx has no deadline); a create that
// timed out but was stored meets AlreadyExists, which is success.
func (s *Server) CreateAll(ctx context.Context, objs []*unstructured.Unstructured) error {
	return s.eachObject(ctx, objs, func(r dynamic.ResourceInterface, o *unstructured.Unstructured) error {
		return createOnce(ctx, r, o, s.OnRetry)
	})
}

// eachObject calls do for every object with the resource client of its
// kind (namespaced when the object is), mapping kinds to resources through
// discovery.
func (s *Server) eachObject(ctx context.Context, objs []*unstructured.Unstructured, do func(dynamic.ResourceInterface, *unstructured.Unstructured) error) error {
	dc, err := discovery.NewDiscoveryClientForConfig(s.Config)
	if err != nil {
		return fmt.Errorf("build discovery client: %w", err)
	}
	var groups []*restmapper.APIGroupResources
	err = retry(ctx, "discover API resources", s.OnRetry, func(context.Context) error {
		groups, err = restmapper.GetAPIGroupResources(dc)
		return err
	})
	if err != nil {
		return fmt.Errorf("discover API resources: %w", err)
	}
	mapper := restmapper.NewDiscoveryRESTMapper(groups)
	dyn, err := dynamic.NewForConfig(s.Config)
	if err != nil {
		return fmt.Errorf("build dynamic client: %w", err)
	}
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return fmt.Errorf("map %s %s: %w", gvk.Kind, o.GetName(), err)
		}
		var r dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if o.GetNamespace() != "" {
			r = dyn.Resource(m.Resource).Namespace(o.GetNamespace())
		}
		if err := do(r, o); err != nil {
			return err
		}
	}
	return nil
}

// createOnce creates o through r, sending the request again while the
// server says to (retry); an object that exists already is success.
func createOnce(ctx context.Context, r dynamic.ResourceInterface, o *unstructured.Unstructured, onRetry func(string, error)) error {
	what := "create " + o.GetKind() + " " + o.GetName()
	err := retry(ctx, what, onRetry, func(ctx context.Context) error {
		_, err := r.Create(ctx, o, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// ServiceAccountKubeconfig issues a token for the existing ServiceAccount
// ns/name (TokenRequest, one hour) and writes a kubeconfig with it into the
// server's directory, so a child process acts with exactly that
// account's RBAC. It returns the file's path.
func (s *Server) ServiceAccountKubeconfig(ctx context.Context, ns, name string) (string, error) {
	kc, err := kubernetes.NewForConfig(s.Config)
	if err != nil {
		return "", fmt.Errorf("build client: %w", err)
	}
	hour := int64(3600)
	tr, err := kc.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name,
		&authv1.TokenRequest{Spec: authv1.TokenRequestSpec{ExpirationSeconds: &hour}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("issue a token for ServiceAccount %s/%s: %w", ns, name, err)
	}
	path := filepath.Join(s.Dir, "kubeconfig-"+ns+"-"+name)
	c := clientcmdapi.NewConfig()
	c.Clusters["test"] = &clientcmdapi.Cluster{Server: s.Config.Host, CertificateAuthority: s.Config.CAFile}
	c.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	c.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: name}
	c.CurrentContext = "test"
	if err := clientcmd.WriteToFile(*c, path); err != nil {
		return "", fmt.Errorf("write the kubeconfig of %s/%s: %w", ns, name, err)
	}
	return path, nil
}
