-- raymond.launchers.kubernetes: the command runs in a pod of its own,
-- started with kubectl run and removed when it ends (stream kind,
-- raymond.launchers.stream); the task script goes to the pod's `sh -s` on
-- stdin.  A stop deletes the pod by its name, the job's.  Needs image:
-- in the config; namespace: is optional (kubectl's default without it).

return {
  name = "kubernetes", kind = "stream", needs = "image",
  run = { "kubectl", "run", "{job}", "--image={image}", "--namespace={namespace}", "--restart=Never", "--rm",
          "-i", "--quiet", "--", "sh", "-s" },
  cancel = { "kubectl", "delete", "pod", "{job}", "--namespace={namespace}", "--wait=false" },
}
