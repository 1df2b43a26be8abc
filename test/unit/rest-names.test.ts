/** bootorch's field paths and words in BOS's spelling (src/rest/names.ts), as REST problem details show them. */
import { describe, expect, test } from 'vitest';
import { bosField, bosWords, camel, convertKeys, snake } from '../../src/rest/names.ts';

describe('bosField', () => {
  test.each([
    ['input.bootSets.compute.nodeList[3]', 'boot_sets.compute.node_list[3]'],
    ['bootSets.computeA.kernelParameters', 'boot_sets.computeA.kernel_parameters'],
    ['bootSets[2].name', 'boot_sets[2].name'],
    ['patch.actualState.bootArtifacts.kernel', 'actual_state.boot_artifacts.kernel'],
    ['patch', ''],
    ['components[4].retryPolicy', 'components[4].retry_policy'],
    ['filter.ids[2]', 'filters.ids[2]'],
    ['filter', 'filters'],
    ['bssToken', 'actual_state.bss_token'],
    ['templateName', 'template_name'],
    ['minAge', 'min_age'],
    ['first', 'page_size'],
    ['xnames[0]', 'xnames[0]'],
    ['Cray-Tenant-Name', 'Cray-Tenant-Name'],
  ])('%s -> %s', (from, to) => {
    expect(bosField(from)).toBe(to);
  });
});

describe('words and keys', () => {
  test('known field names in messages are translated, other words are left alone', () => {
    expect(bosWords('must have at least one of nodeList, nodeRolesGroups or nodeGroups')).toBe(
      'must have at least one of node_list, node_roles_groups or node_groups',
    );
    expect(bosWords('boot set "computeA" is given twice')).toBe('boot set "computeA" is given twice');
  });

  test('convertKeys converts nested keys and leaves map keys named in `keep` as they are', () => {
    expect(convertKeys({ desired_state: { boot_artifacts: { kernel_parameters: 'x' } } }, camel)).toEqual({
      desiredState: { bootArtifacts: { kernelParameters: 'x' } },
    });
    expect(convertKeys({ bootSets: { myComputeSet: { nodeList: [] } } }, snake, new Set(['boot_sets']))).toEqual({
      boot_sets: { myComputeSet: { node_list: [] } },
    });
  });
});
