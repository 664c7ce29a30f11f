/**
 * System: which backend the worker runs on and why (auto's choice, with its probe's timings, or
 * the person's forced choice), the WebGPU adapter with its key limits and features, and a kernel
 * self-test against the CPU reference.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId } from 'react';
import { CompanionPanel } from './CompanionPanel';
import { keys } from '../queries/keys';
import {
  BACKEND_CHOICES,
  backendInfoQuery,
  runSelfTest,
  storeBackendPreference,
  storedBackendPreference,
} from '../queries/system';
import { workbench } from '../worker-client';
import type { BackendInfo, BackendPreference, SelfTestResult } from '../../worker/protocol';

const CHOICE_TEXT: Record<BackendPreference, string> = {
  auto: 'auto: the fastest available',
  webgpu: 'webgpu: WGSL kernels on the GPU',
  wasm: 'wasm: WebAssembly SIMD kernels on the CPU',
  cpu: 'cpu: the plain references (slowest)',
};

function BackendChoice() {
  const id = useId();
  const client = useQueryClient();
  const change = useMutation({
    mutationFn: (p: BackendPreference) => workbench.init(p),
    onSuccess: (info, p) => {
      storeBackendPreference(p);
      client.setQueryData(keys.backend(), info);
    },
  });
  return (
    <div className="backend-choice">
      <label htmlFor={id}>Backend</label>
      <select
        id={id}
        defaultValue={storedBackendPreference()}
        onChange={(e) => change.mutate(e.target.value as BackendPreference)}
        disabled={change.isPending}
        aria-describedby={`${id}-note`}
      >
        {BACKEND_CHOICES.map((c) => (
          <option key={c} value={c}>
            {CHOICE_TEXT[c]}
          </option>
        ))}
      </select>
      <p id={`${id}-note`} className="note">
        Applies to runs started from now on; a run already going keeps its backend.
      </p>
      {change.isError && (
        <p role="alert" className="bad">
          Could not switch the backend ({change.error.name}): {change.error.message}
        </p>
      )}
    </div>
  );
}

function ProbeTable({ probe }: { probe: NonNullable<BackendInfo['probe']> }) {
  return (
    <table data-testid="backend-probe">
      <caption>Probe: {probe.workload}</caption>
      <thead>
        <tr>
          <th scope="col">Backend</th>
          <th scope="col">ms per repetition</th>
        </tr>
      </thead>
      <tbody>
        {Object.entries(probe.msPerRep).map(([b, ms]) => (
          <tr key={b}>
            <th scope="row">{b}</th>
            <td>{ms?.toFixed(2)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function AdapterDetails({ info }: { info: BackendInfo }) {
  if (!info.adapter) {
    return <p data-testid="adapter-info">No WebGPU adapter{info.backend === 'cpu' ? '' : ' in use'}.</p>;
  }
  const a = info.adapter;
  const software =
    a.isFallbackAdapter ||
    /swiftshader|llvmpipe|lavapipe|warp/i.test(`${a.vendor} ${a.architecture} ${a.description} ${a.device}`);
  return (
    <div data-testid="adapter-info">
      {software && (
        <p className="note" data-testid="software-adapter">
          This adapter is a <strong>software GPU</strong> ({a.architecture || a.description || 'a fallback adapter'}):
          SwiftShader and its kind run WebGPU on the CPU, with no graphics hardware involved. Every kernel works and
          gives the same numbers, but slowly (matmuls reach a few GFLOPS, and each dispatch costs tens of microseconds),
          so <code>auto</code> trains on the wasm backend instead: SIMD kernels on the same CPU, an order of magnitude
          faster. Chrome picks a software adapter when it finds no usable GPU (or its GPU is blocklisted):{' '}
          <code>chrome://gpu</code> says why.
        </p>
      )}
      <dl className="facts">
        <dt>Vendor</dt>
        <dd>{a.vendor || '(not reported)'}</dd>
        <dt>Architecture</dt>
        <dd>{a.architecture || '(not reported)'}</dd>
        <dt>Description</dt>
        <dd>{a.description || a.device || '(not reported)'}</dd>
        <dt>Fallback adapter</dt>
        <dd>{a.isFallbackAdapter ? 'yes' : 'no'}</dd>
        <dt>Features</dt>
        <dd>{a.features.length ? a.features.join(', ') : 'none'}</dd>
      </dl>
      <table className="limits">
        <caption>Device limits</caption>
        <thead>
          <tr>
            <th scope="col">Limit</th>
            <th scope="col">Value</th>
          </tr>
        </thead>
        <tbody>
          {Object.entries(a.limits).map(([k, v]) => (
            <tr key={k}>
              <th scope="row">{k}</th>
              <td>{v.toLocaleString('en-US')}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function SelfTestSummary({ result }: { result: SelfTestResult }) {
  return (
    <div>
      <p data-testid="selftest-result" className={result.passed ? 'ok' : 'bad'}>
        {result.passed ? 'passed' : 'failed'}: {result.cases.length} matmul cases on {result.backend}, max |error|{' '}
        {result.maxAbsError.toExponential(2)}; {result.gflops.toFixed(2)} GFLOPS at {result.gflopsSize}³ (
        {(result.ms / 1000).toFixed(1)} s)
      </p>
      <details>
        <summary>Cases</summary>
        <table>
          <thead>
            <tr>
              <th scope="col">Case</th>
              <th scope="col">Max |error|</th>
              <th scope="col">Tolerance</th>
              <th scope="col">Result</th>
            </tr>
          </thead>
          <tbody>
            {result.cases.map((c) => (
              <tr key={c.name}>
                <th scope="row">{c.name}</th>
                <td>{c.maxAbsError.toExponential(2)}</td>
                <td>{c.tolerance.toExponential(1)}</td>
                <td>{c.passed ? 'passed' : 'failed'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </div>
  );
}

export function SystemView() {
  const backend = useQuery(backendInfoQuery());
  const selfTest = useMutation({ mutationFn: runSelfTest });

  return (
    <section aria-labelledby="system-title">
      <h1 id="system-title">System</h1>
      <h2>Backend</h2>
      {backend.isPending && <p role="status">Choosing a backend…</p>}
      {backend.isError && (
        <p role="alert">
          Could not start the worker backend ({backend.error.name}): {backend.error.message}
        </p>
      )}
      {backend.data && (
        <>
          <p>
            Active backend: <strong data-testid="backend-name">{backend.data.backend}</strong>
            {backend.data.backend === 'wasm' && (
              <span data-testid="backend-threads">
                {' '}
                on {backend.data.threads}{' '}
                {backend.data.threads === 1
                  ? 'thread (the page is not cross-origin isolated, or has one core)'
                  : 'threads'}
              </span>
            )}
            {backend.data.split && backend.data.threads > 1 && (
              <span data-testid="backend-split"> ({backend.data.split})</span>
            )}
            {backend.data.simd && (
              <span data-testid="backend-simd">
                ,{' '}
                {backend.data.simd === 'relaxed'
                  ? 'relaxed SIMD (fused multiply-add)'
                  : 'plain SIMD (this browser has no relaxed SIMD)'}
              </span>
            )}
          </p>
          <p data-testid="backend-reason">Why: {backend.data.reason}.</p>
          {backend.data.probe && <ProbeTable probe={backend.data.probe} />}
          <BackendChoice />
          <AdapterDetails info={backend.data} />
        </>
      )}
      <CompanionPanel />
      <h2>Kernel self-test</h2>
      <p>
        Runs matmul on the active backend in every layout (A·B, A·Bᵀ, Aᵀ·B) on odd shapes and compares it with the CPU
        reference.
      </p>
      <button type="button" onClick={() => selfTest.mutate()} disabled={!backend.data || selfTest.isPending}>
        Run kernel self-test
      </button>
      <div aria-live="polite">
        {selfTest.isPending && <p role="status">Running the self-test…</p>}
        {selfTest.isError && (
          <p data-testid="selftest-result" role="alert" className="bad">
            failed: {selfTest.error.name}: {selfTest.error.message}
          </p>
        )}
        {selfTest.data && <SelfTestSummary result={selfTest.data} />}
      </div>
    </section>
  );
}
