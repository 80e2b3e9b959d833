// Samples gathered per metric definition during one scrape, then handed out as families in the
// order each definition was first used (a collector's families stay together, as KubeVirt's
// collectors write them). Pure.
import type { Labels, MetricFamily, MetricType, Sample } from './exposition.ts';

export interface MetricDef { readonly name: string; readonly type: MetricType; readonly help: string }

export class FamilyBuilder {
  private readonly samples = new Map<MetricDef, Sample[]>();
  /** Adds a sample; an undefined value (a figure nobody reported) is left out, never written as 0. */
  add(def: MetricDef, labels: Labels, value: number | undefined): void {
    if (value === undefined) return;
    const list = this.samples.get(def) ?? [];
    list.push({ labels, value });
    this.samples.set(def, list);
  }
  families(): MetricFamily[] {
    return [...this.samples].map(([d, samples]) => ({ name: d.name, help: d.help, type: d.type, samples }));
  }
}
