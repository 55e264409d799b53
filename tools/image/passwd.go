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
