import { describe, expect, it } from 'vitest';
import { referenceBlasWhy } from './torch-peer';

describe('the PyTorch peer refuses the reference BLAS', () => {
  it('names the reference libblas and the package that replaces it', () => {
    const why = referenceBlasWhy(['/usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0']);
    expect(why).toMatch(/reference BLAS \(\/usr\/lib\/x86_64-linux-gnu\/blas\/libblas\.so\.3\.11\.0\)/);
    expect(why).toMatch(/apt install libopenblas0-pthread/);
  });
  it('lets OpenBLAS, or a torch with its BLAS built in, through', () => {
    expect(referenceBlasWhy(['/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3'])).toBeNull();
    expect(referenceBlasWhy([])).toBeNull();
  });
  it('lets a process that also maps OpenBLAS through (it is the one multiplying)', () => {
    const both = ['/usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0', '/usr/lib/x86_64-linux-gnu/libopenblas.so.0'];
    expect(referenceBlasWhy(both)).toBeNull();
  });
});
