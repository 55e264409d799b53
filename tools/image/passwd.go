package main

// NonRootUser is the user:group the image runs as by default. Pods that need
// root (the director and netd, for IPVS and links) say so in their manifests.
const NonRootUser = "65532:65532"

// passwd is the image's /etc/passwd: root and nonroot (65532), neither with
// a login shell, so a user name resolves and files show an owner.
const passwd = `root:x:0:0:root:/root:/sbin/nologin
nonroot:x:65532:65532:nonroot:/nonexistent:/sbin/nologin
`

// group is the image's /etc/group, matching passwd.
const group = `root:x:0:
nonroot:x:65532:
`

// EnvoyUser is the user:group of the Envoy image, the one deploy/envoy
// runs it as (runAsUser 101), as in the official envoyproxy/envoy images.
const EnvoyUser = "101:101"

// envoyPasswd is the Envoy image's /etc/passwd: root and envoy (101).
const envoyPasswd = `root:x:0:0:root:/root:/sbin/nologin
envoy:x:101:101:envoy:/nonexistent:/sbin/nologin
`

// envoyGroup is the Envoy image's /etc/group, matching envoyPasswd.
const envoyGroup = `root:x:0:
envoy:x:101:
`
