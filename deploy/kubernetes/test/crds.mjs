// Checks custom resources against their CRDs' schemas (types, required fields, enums, formats),
// as compiled by @kubernetes-models. Reads a JSON array of objects on stdin; prints one line per
// problem and exits 1 when there is any. An object of an unknown kind is a problem.
import { Cluster } from "@kubernetes-models/cloudnative-pg/postgresql.cnpg.io/v1/Cluster";
import { ScheduledBackup } from "@kubernetes-models/cloudnative-pg/postgresql.cnpg.io/v1/ScheduledBackup";
import { Application } from "@kubernetes-models/argo-cd/argoproj.io/v1alpha1/Application";
import { AppProject } from "@kubernetes-models/argo-cd/argoproj.io/v1alpha1/AppProject";
import { ApplicationSet } from "@kubernetes-models/argo-cd/argoproj.io/v1alpha1/ApplicationSet";

const models = {
  "postgresql.cnpg.io/v1 Cluster": Cluster,
  "postgresql.cnpg.io/v1 ScheduledBackup": ScheduledBackup,
  "argoproj.io/v1alpha1 Application": Application,
  "argoproj.io/v1alpha1 AppProject": AppProject,
  "argoproj.io/v1alpha1 ApplicationSet": ApplicationSet,
};

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const objects = JSON.parse(Buffer.concat(chunks).toString("utf8"));
let problems = 0;
for (const { source, object } of objects) {
  const key = `${object.apiVersion} ${object.kind}`;
  const name = `${source}: ${object.kind}/${object.metadata?.name}`;
  const Model = models[key];
  if (!Model) {
    console.log(`${name}: no schema for ${key}`);
    problems++;
    continue;
  }
  try {
    new Model(object).validate();
  } catch (e) {
    console.log(`${name}: ${e.message}`);
    problems++;
  }
}
process.exit(problems ? 1 : 0);
